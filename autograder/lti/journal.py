"""What the sync posted to one LMS line item, kept between runs: the sync journal.

One JSON file per assignment and LMS course (``OUT/lti/<assignment>-<digest>.json``), replaced whole
(``durable.atomic_write``). It names the line item the assignment's scores go to and, for each LMS user,
the last score posted (``posted``) and the scores about to be posted (``pending``, written before they are
sent). A sync killed midway leaves its pending scores in the file; the next one reads the LMS's results and
counts a pending score the LMS holds as posted, so no score is posted twice, and a score in the LMS that
differs from the last one posted is a person's change, named and kept. The text is ASCII JSON: every
character of a name from the LMS or the gradebook is an escape (inert in any viewer).
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from ..durable import atomic_write
from .session import LtiError

FORMAT = 1
MAX_JOURNAL = 256 << 20
FULLY_GRADED, PENDING_MANUAL = "FullyGraded", "PendingManual"


@dataclass(frozen=True)
class Posted:
    """One score as sent to the LMS (``score`` None: a status with no score, PendingManual)."""
    student: str
    score: float | None
    maximum: float
    grading: str
    activity: str
    timestamp: str

    @property
    def fraction(self) -> float | None:
        return None if self.score is None or not self.maximum else self.score / self.maximum

    def same(self, other: "Posted") -> bool:
        """The same score and status (the time it was sent aside)."""
        return (self.grading, self.activity) == (other.grading, other.activity) \
            and same_fraction(self.fraction, other.fraction)

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data) -> "Posted":
        if not isinstance(data, dict):
            raise ValueError("an entry is not an object")
        text = {n: data.get(n) for n in ("student", "grading", "activity", "timestamp")}
        if not all(isinstance(v, str) for v in text.values()):
            raise ValueError("an entry lacks its student, status or time")
        score, maximum = data.get("score"), data.get("maximum")
        if not (score is None or _finite(score)) or not _finite(maximum):
            raise ValueError("an entry's score is not a number")
        return cls(score=None if score is None else float(score), maximum=float(maximum), **text)


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def same_fraction(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-6


@dataclass(frozen=True)
class Journal:
    assignment: str
    issuer: str
    client_id: str
    lineitems_url: str
    lineitem: str = ""
    posted: dict = field(default_factory=dict)        # LMS user id -> Posted
    pending: dict = field(default_factory=dict)       # LMS user id -> Posted, sent or about to be

    def to_dict(self) -> dict:
        return {"format": FORMAT, "assignment": self.assignment, "issuer": self.issuer, "client_id": self.client_id,
                "lineitems_url": self.lineitems_url, "lineitem": self.lineitem,
                "posted": {k: v.to_dict() for k, v in sorted(self.posted.items())},
                "pending": {k: v.to_dict() for k, v in sorted(self.pending.items())}}

    @classmethod
    def from_dict(cls, data) -> "Journal":
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"not a sync journal of format {FORMAT}")
        names = ("assignment", "issuer", "client_id", "lineitems_url", "lineitem")
        if not all(isinstance(data.get(n), str) for n in names):
            raise ValueError("its heading is incomplete")
        entries = {}
        for part in ("posted", "pending"):
            if not isinstance(data.get(part), dict):
                raise ValueError(f"its {part} scores are not an object")
            entries[part] = {str(k): Posted.from_dict(v) for k, v in data[part].items()}
        return cls(**{n: data[n] for n in names}, **entries)

    def with_changes(self, **changes) -> "Journal":
        return replace(self, **changes)


def journal_path(out: Path, assignment: str, issuer: str, client_id: str, lineitems_url: str) -> Path:
    """One journal per assignment and LMS course (two sections of one gradebook keep two)."""
    digest = hashlib.sha256("\n".join((issuer, client_id, lineitems_url)).encode()).hexdigest()[:12]
    return Path(out) / "lti" / f"{assignment}-{digest}.json"


def read_journal(path: Path, fresh: Journal) -> Journal:
    """The journal at ``path`` (``fresh`` when there is none); LtiError when it cannot be trusted."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_JOURNAL + 1)
    except FileNotFoundError:
        return fresh
    except OSError as exc:
        raise LtiError(f"cannot read the sync journal {path}: {exc.strerror or exc}") from None
    try:
        journal = Journal.from_dict(json.loads(raw)) if len(raw) <= MAX_JOURNAL else None
    except ValueError as exc:
        raise LtiError(f"the sync journal {path} is damaged ({exc}): move it away and run again (scores already "
                       "in the LMS are then compared with the gradebook's, never posted twice blindly)") from None
    if journal is None:
        raise LtiError(f"the sync journal {path} is over {MAX_JOURNAL >> 20} MiB: is it the right file?")
    ours = (fresh.assignment, fresh.issuer, fresh.client_id, fresh.lineitems_url)
    if (journal.assignment, journal.issuer, journal.client_id, journal.lineitems_url) != ours:
        raise LtiError(f"the sync journal {path} was written for another LMS course or assignment: move it away")
    return journal


def write_journal(path: Path, journal: Journal) -> None:
    atomic_write(path, json.dumps(journal.to_dict(), ensure_ascii=True, allow_nan=False, indent=1) + "\n")
