"""A record on disk: one JSON file per student, written atomically (``durable``), under a file name
that fits any student id one to one. A record read back is current when it is for the assignment
being graded and carries the fingerprint of what grades now (see ``grading.fingerprint``);
``--resume`` keeps current records and regrades the rest.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Collection, Iterable
from pathlib import Path

from ..durable import OutputError, atomic_write
from ..inert import shown
from .record import Record

_PLAIN_NAME_BYTES = 200          # ids longer than this get a shortened name with a digest


def name_digest(name: str, chars: int) -> str:
    """The first ``chars`` hex digits of the sha256 of ``name`` (a student id, an inbound folder name: any
    bytes a folder name may hold, undecodable ones as surrogate escapes). The one way a name becomes part
    of a file name or a key: a record's shortened file name, watch's saved records, the Dask keys."""
    return hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:chars]


def file_name(student_id: str, suffix: str = "") -> str:
    """A file name for a student: ``<id><suffix>`` when that is short and plain, else a short id, ``~`` and
    a digest of the whole id.

    Any student id (a folder name of up to 255 bytes, unicode, dots, a leading dash) gives a name that
    fits the file system and never starts with a dot or a dash. The map is one to one: a plain name
    never holds ``~`` and a shortened one always does, so no id's name is another's shortened name (a
    student whose folder was named like a classmate's shortened name once overwrote that record).
    """
    if (len(student_id.encode("utf-8", "surrogateescape")) <= _PLAIN_NAME_BYTES and not student_id.startswith((".", "-")) and "/" not in student_id
            and "~" not in student_id):
        return student_id + suffix
    stem = "".join(ch for ch in student_id[:40] if ch.isalnum() or ch in "_-.").lstrip(".-")
    return f"{stem}~{name_digest(student_id, 16)}{suffix}"


def record_path(out: Path, student_id: str) -> Path:
    return Path(out) / "records" / file_name(student_id, ".json")


def check_record_names(student_ids: Iterable[str]) -> None:
    """Raise ValueError naming both students when two ids would share a record file (never an overwrite)."""
    seen: dict[str, str] = {}
    for student in student_ids:
        name = file_name(student, ".json")
        other = seen.setdefault(name, student)
        if other != student:
            raise ValueError(f"students {shown(other)} and {shown(student)} would share the record file "
                             f"{shown(name)}, so one would overwrite the other; nothing was graded. Rename one "
                             "of the two folders in submitted/ and grade again")


def write_record(out: Path, record: Record) -> None:
    """Write the record atomically; OutputError, naming both, if its file holds another student's record."""
    path = record_path(out, record.student_id)
    other = load_record(out, record.student_id)
    if other is not None and other.student_id != record.student_id:
        raise OutputError(f"{path} holds the record of {shown(other.student_id)}, and {shown(record.student_id)} "
                          "maps to the same file name; it was not overwritten. Rename one of the two folders in "
                          "submitted/ and grade again")
    atomic_write(path, record.to_json())


def load_record(out: Path, student_id: str) -> Record | None:
    """The stored record of this student, or None when there is none or it cannot be read."""
    try:
        return Record.from_json(record_path(out, student_id).read_text())
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def read_record(out: Path, student_id: str, assignment: str, fingerprint: str | None = None) -> Record | None:
    """The stored record for this student and assignment (graded with ``fingerprint`` when given), or None."""
    record = load_record(out, student_id)
    if record is None or record.assignment != assignment or record.student_id != student_id:
        return None
    if fingerprint is not None and record.fingerprint != fingerprint:
        return None
    return record


def graded_but_gone(out: Path, assignment: str, students: Collection[str]) -> list[str]:
    """The students of records for ``assignment`` in ``out/records`` who are not among ``students`` (those
    with a submission now): graded by an earlier run, their submission folder since removed."""
    expected = {file_name(s, ".json") for s in students}
    folder = Path(out) / "records"
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json") and n not in expected)
    except OSError:
        return []
    gone = []
    for name in names:
        try:
            record = Record.from_json((folder / name).read_text())
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            continue
        if record.assignment == assignment and record.student_id not in students:
            gone.append(record.student_id)
    return gone
