"""A submission's ``timestamp.txt`` (written by ``nbgrader submit``), read as hostile input.

The file is opened without following links, must be a regular file of at most
``MAX_BYTES`` bytes of UTF-8, and is parsed the way nbgrader's ``parse_utc`` parses it
("2026-11-30 12:00:00.000000 UTC", an IANA zone name, a numeric offset, or ISO 8601) into
a naive UTC time. A zone name is only looked up when it is a plain name (no paths).
Anything else gives a note instead of a time; nothing raises.

Every time the grader writes (grades.csv, the feedback's ``timestamp.txt``, the gradebook, the
due date in messages, the run lock) is written by ``written_time``, the one writer, in the form
nbgrader writes and reads back.
"""
from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

MAX_BYTES = 256
_ZONE = re.compile(r"[A-Za-z][A-Za-z0-9_+\-]{0,40}(/[A-Za-z0-9_+\-]{1,40}){0,3}")


@dataclass(frozen=True)
class Submitted:
    at: datetime | None = None          # naive UTC
    note: str | None = None             # why ``at`` is missing when the file was there but unusable

    def text(self) -> str:
        """As nbgrader writes it (``written_time``); "" when there is no time."""
        return written_time(self.at) if self.at else ""


def written_time(at: datetime) -> str:
    """The one writer of times: "YYYY-MM-DD HH:MM:SS.ffffff UTC", as nbgrader writes a timestamp, for any
    year from 1 to 9999. ``at`` is naive UTC or aware (converted to UTC). The year is always four digits:
    strftime writes year 31 as "31", which nbgrader's parser reads as another date or not at all."""
    if at.tzinfo is not None and at.utcoffset() is not None:
        at = (at - at.utcoffset()).replace(tzinfo=None)
    return (f"{at.year:04d}-{at.month:02d}-{at.day:02d} {at.hour:02d}:{at.minute:02d}:{at.second:02d}"
            f".{at.microsecond:06d} UTC")


def iso_time(at: datetime) -> str:
    """The same instant as ISO 8601 with microseconds and its offset, as LTI's Assignment and Grade Services
    read a score's timestamp (aware ``at``; a naive one is taken as UTC)."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)
    return at.isoformat(timespec="microseconds")


def read_timestamp(folder: Path) -> Submitted:
    """The submission time recorded in ``folder/timestamp.txt``; no file gives ``Submitted()``."""
    path = Path(folder) / "timestamp.txt"
    try:
        raw = read_small(path, MAX_BYTES)
    except FileNotFoundError:
        return Submitted()
    except (OSError, ValueError) as exc:
        return Submitted(note=f"timestamp.txt could not be read ({exc}); lateness was not checked")
    try:
        text = raw.decode("utf-8").strip()
        if not text:
            return Submitted(note="timestamp.txt is empty; lateness was not checked")
        return Submitted(at=parse_utc(text))
    except (ValueError, OverflowError, TypeError, LookupError) as exc:
        shown = raw[:60].decode("ascii", "replace").encode("unicode_escape").decode()
        return Submitted(note=f"timestamp.txt holds {shown!r}, which is not a time ({type(exc).__name__}); "
                              "lateness was not checked")


def read_small(path: Path, max_bytes: int) -> bytes:
    """A small file of a submission: no links followed, no FIFO waited on, a regular file of at most
    ``max_bytes`` bytes; raises OSError or ValueError (saying why) otherwise."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("it is not a regular file")
        data = os.read(fd, max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise ValueError(f"it is longer than {max_bytes} bytes")
    return data


def parse_utc(text: str) -> datetime:
    """nbgrader's ``parse_utc`` on a string: "date time ZONE" with ZONE an offset in seconds or a
    zone name, else whatever dateutil parses; the result is naive UTC."""
    import dateutil.parser
    import dateutil.tz
    parts = text.split(" ")
    if len(parts) == 3:
        zone = _zone(parts[2], dateutil.tz)
        ts = dateutil.parser.parse(" ".join(parts[:2] + ["TZ"]), tzinfos={"TZ": zone})
    else:
        ts = dateutil.parser.parse(text)
    if ts.tzinfo is not None:
        ts = (ts - ts.utcoffset()).replace(tzinfo=None)
    return ts


def _zone(name: str, tz):
    try:
        return int(name)
    except ValueError:
        pass
    if not _ZONE.fullmatch(name):
        raise ValueError(f"{name!r} is not a time zone name")
    return tz.gettz(name)
