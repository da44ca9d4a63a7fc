"""Result records on disk: one JSON file per student, written atomically.

A record is complete when it parses and carries ``"complete": true`` for the
assignment being graded; ``--resume`` skips complete records. A write goes to
a temporary file in the same folder, is flushed to disk, then renamed over
the old one, so a crash or a full disk never leaves a half-written record.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from .inert import json_safe

_PLAIN_NAME_BYTES = 200          # ids longer than this get a shortened name with a digest


class OutputError(Exception):
    """Writing results failed (e.g. the disk is full); what is already written is intact."""


def atomic_write(path: Path, data: bytes | str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".partial-", suffix=".tmp")   # never grows with the name
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise OutputError(f"could not write {path}: {exc.strerror or exc}. Results written before this "
                          "are intact; free some space and run again with --resume.") from exc


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def file_name(student_id: str, suffix: str = "") -> str:
    """A file name for a student: ``<id><suffix>`` when that is short and plain, else a short id and a digest.

    Any student id (a folder name of up to 255 bytes, unicode, dots, a leading dash) gives a name that
    fits the file system and never starts with a dot or a dash.
    """
    raw = student_id.encode("utf-8", "surrogateescape")
    if len(raw) <= _PLAIN_NAME_BYTES and not student_id.startswith((".", "-")) and "/" not in student_id:
        return student_id + suffix
    stem = "".join(ch for ch in student_id[:40] if ch.isalnum() or ch in "_-.").lstrip(".-")
    return f"{stem}~{hashlib.sha256(raw).hexdigest()[:16]}{suffix}"


def record_path(out: Path, student_id: str) -> Path:
    return Path(out) / "records" / file_name(student_id, ".json")


def dumps(value, indent: int | None = 1) -> str:
    """Always valid JSON: non-finite floats become null (``json.dumps`` would write NaN)."""
    return json.dumps(json_safe(value), indent=indent, sort_keys=True, allow_nan=False)


def write_record(out: Path, record: dict) -> None:
    atomic_write(record_path(out, record["student_id"]), dumps(record))


def read_record(out: Path, student_id: str, assignment: str) -> dict | None:
    """The complete record for this student and assignment, or None."""
    try:
        record = json.loads(record_path(out, student_id).read_text())
    except (OSError, ValueError):
        return None
    if (isinstance(record, dict) and record.get("complete") is True and record.get("assignment") == assignment
            and record.get("student_id") == student_id):
        return record
    return None
