"""Scores into nbgrader's gradebook through nbgrader's own API (formgrader and `nbgrader export` agree).

The assignment's structure (notebooks, grade cells, points) is created by
nbgrader itself (generate_assignment against this database) the first time.
Each graded cell gets the rubric's points as its auto score; a submission
that needs review is marked for manual grading instead of left at 0.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
import warnings
from pathlib import Path

from ..nbgrader_cli import tool_env
from ..release import generate_release
from ..seeds import COURSE_ID


@contextlib.contextmanager
def _nbgrader_path():
    """nbgrader's Gradebook runs `alembic`, which lives beside this Python; its SQLAlchemy
    session warns about its own add_submission, which is noise for instructors."""
    old = os.environ.get("PATH", "")
    os.environ["PATH"] = tool_env()["PATH"]
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*not in session.*")
            yield
    finally:
        os.environ["PATH"] = old


def _ensure_assignment(db_url: str, course: Path, assignment: str) -> None:
    from nbgrader.api import Gradebook, MissingEntry
    with Gradebook(db_url, COURSE_ID) as gb:
        try:
            if gb.find_assignment(assignment).notebooks:
                return
        except MissingEntry:
            pass
    with tempfile.TemporaryDirectory() as tmp:
        generate_release(course, dest=Path(tmp) / "release", assignment=assignment, db_url=db_url)


def write_gradebook(db_url: str, records: list[dict], *, course: Path, assignment: str) -> None:
    from nbgrader.api import Gradebook, MissingEntry
    with _nbgrader_path():
        _ensure_assignment(db_url, course, assignment)
        with Gradebook(db_url, COURSE_ID) as gb:
            for record in records:
                student = record["student_id"]
                gb.update_or_create_student(student)
                try:
                    submission = gb.find_submission(assignment, student)
                except MissingEntry:
                    submission = gb.add_submission(assignment, student)
                earned = {g: cell["earned"] for g, cell in record.get("cells", {}).items()}
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        grade.auto_score = float(earned.get(grade.name, 0))
                        grade.needs_manual_grade = bool(record["needs_review"]) and grade.max_score > 0
            gb.db.commit()
