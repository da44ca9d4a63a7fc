"""Graded classes made once per test run and copied for each test that reads one.

A class graded the same way (the same students, the same grading options) is graded once by the first test
process that asks for it, under a lock in a folder every process of the run sees (pytest-xdist's workers
included); each test then gets a copy of its own (``shutil.copytree``: files, modes and times), so it may
change its copy (grade it again, resubmit, edit the gradebook) without touching another's. Nothing in a
graded course names the folder it was graded in (records, grades.csv and the gradebook hold no paths).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
from pathlib import Path

from batch_helpers import SMALL, make_class

DONE = ".graded"


def shared_root(tmp_path_factory) -> Path:
    """The run's base temporary folder: under pytest-xdist, the parent of every worker's own."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


class GradedClasses:
    """``copy(dest, students, out=..., **options)``: ``dest/course`` (its submissions ``students`` of the
    sample class) as ``grade_batch(course=..., progress=False, **options)`` left it, the run's outputs in
    ``dest/<out>`` (``out=None``: the course's own ``grading/``); returns (course, outputs)."""

    def __init__(self, root: Path):
        self.root = root / "graded-classes"
        self.root.mkdir(exist_ok=True)

    def copy(self, dest: Path, students=SMALL, out: str | None = "out", **options) -> tuple[Path, Path]:
        template = self._template(list(students), out, options)
        shutil.copytree(template, dest, symlinks=True, ignore=shutil.ignore_patterns(DONE), dirs_exist_ok=True)
        course = dest / "course"
        return course, (dest / out if out else course / "grading")

    def _template(self, students: list, out: str | None, options: dict) -> Path:
        key = hashlib.sha256(json.dumps([students, out, sorted(options.items())], default=str).encode()).hexdigest()
        folder = self.root / key[:16]
        with open(self.root / f"{key[:16]}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)                  # one process grades it; the others wait, then copy
            if not (folder / DONE).exists():
                from autograder.run.batch import grade_batch
                shutil.rmtree(folder, ignore_errors=True)
                course = make_class(folder, students)
                grade_batch(course=course, out=folder / out if out else None, progress=False, **options)
                (folder / DONE).touch()
        return folder
