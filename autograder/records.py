"""Result records on disk: one JSON file per student, written atomically.

A record is complete when it parses and carries ``"complete": true`` for the
assignment being graded; ``--resume`` skips complete records. A write goes to
a temporary file in the same folder, is flushed to disk, then renamed over
the old one, so a crash or a full disk never leaves a half-written record.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


class OutputError(Exception):
    """Writing results failed (e.g. the disk is full); what is already written is intact."""


def atomic_write(path: Path, data: bytes | str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
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


def record_path(out: Path, student_id: str) -> Path:
    return Path(out) / "records" / f"{student_id}.json"


def write_record(out: Path, record: dict) -> None:
    atomic_write(record_path(out, record["student_id"]), json.dumps(record, indent=1, sort_keys=True))


def read_record(out: Path, student_id: str, assignment: str) -> dict | None:
    """The complete record for this student and assignment, or None."""
    try:
        record = json.loads(record_path(out, student_id).read_text())
    except (OSError, ValueError):
        return None
    if isinstance(record, dict) and record.get("complete") is True and record.get("assignment") == assignment:
        return record
    return None
