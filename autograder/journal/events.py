"""The journal's events, one frozen type each: what the service writes, and all that its readers read.

Each event is one JSON line, ``{"event": <its name>, <its fields in order>}``. ``to_dict`` writes that
line's object, ``from_dict`` reads one back; ``parse_event`` reads any line's object, and gives None for
one that is no event (a damaged line, an unknown name, an entry that is not a name). A field missing
from a line (an older journal) takes its default; a time or count that is not a number reads as 0.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Self, cast


def _number(value: object) -> float:
    """A time or count as written (int or float); 0 for anything else (a damaged line)."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class _Event:
    EVENT: ClassVar[str] = ""
    _OPTIONAL: ClassVar[tuple[str, ...]] = ()      # fields written only when they hold something
    entry: str

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"event": self.EVENT}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in self._OPTIONAL and value is None:
                continue
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        kwargs = {}
        for f in fields(cls):
            if f.name in data:
                kwargs[f.name] = _READ.get(str(f.type), _as_written)(data[f.name])
        return cls(**kwargs)


def _as_written(value: Any) -> Any:
    return value


_READ: dict[str, Callable[[Any], Any]] = {"str": _text, "float": _number, "int": _number, "bool": bool,
         "tuple[str, ...]": lambda v: tuple(map(str, v)) if isinstance(v, list) else (),
         "str | None": lambda v: v if isinstance(v, str) else None,
         "bool | None": lambda v: v if isinstance(v, bool) else None,
         "float | None": lambda v: _number(v) if v is not None else None}


@dataclass(frozen=True)
class Received(_Event):
    """The entry was read: whose it is, the digest of its secret, when it arrived, what was read then."""
    EVENT: ClassVar[str] = "received"
    student: str = ""
    assignment: str = ""
    secret: str = ""              # sha256 of the submission's secret (never the secret itself)
    received: float = 0           # when it counts as received (``watch.inbound.receive``)
    at: float = 0
    submission: str = ""          # the digest of the files grading takes, as read then (what must be graded)


@dataclass(frozen=True)
class Started(_Event):
    """Grading began (a second ``Started`` without ``Graded``: it stopped the service twice)."""
    EVENT: ClassVar[str] = "started"
    at: float = 0


@dataclass(frozen=True)
class Stopped(_Event):
    """A stop signal (or a full disk) ended grading: the submission's fault no more than the instructor's."""
    EVENT: ClassVar[str] = "stopped"
    at: float = 0


@dataclass(frozen=True)
class Graded(_Event):
    """The record is saved in the state folder (``record``: its file name there)."""
    EVENT: ClassVar[str] = "graded"
    _OPTIONAL: ClassVar[tuple[str, ...]] = ("charged",)
    student: str = ""
    record: str = ""
    total: float = 0
    max: float = 0
    diagnoses: tuple[str, ...] = ()
    review: bool = False
    seconds: float = 0
    at: float = 0
    charged: bool | None = None   # False: a backlog graded at the start, not counted against the limit


@dataclass(frozen=True)
class Published(_Event):
    """Its pages are in the exchange's feedback folder: ``kind`` is feedback, limit or closed."""
    EVENT: ClassVar[str] = "published"
    _OPTIONAL: ClassVar[tuple[str, ...]] = ("show", "next")
    kind: str = ""
    pages: int = 0
    kept: int = 0                 # pages release_feedback had already put there
    at: float = 0
    show: str | None = None       # feedback: what students are shown
    next: float | None = None     # limit: when the next check is possible


@dataclass(frozen=True)
class Note(_Event):
    """It was not graded, and why (for the instructor)."""
    EVENT: ClassVar[str] = "note"
    note: str = ""
    at: float = 0


Event = Received | Started | Stopped | Graded | Published | Note
EVENTS: dict[str, type[_Event]] = {cls.EVENT: cls for cls in (Received, Started, Stopped, Graded, Published, Note)}


def parse_event(data: object) -> Event | None:
    """The event a journal line's object holds; None when it holds none."""
    if not isinstance(data, dict) or not isinstance(data.get("entry"), str):
        return None
    name = data.get("event")
    cls = EVENTS.get(name) if isinstance(name, str) else None
    return cast(Event, cls.from_dict(data)) if cls is not None else None
