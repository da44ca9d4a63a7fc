"""The course's gradebook read without ever writing it, through nbgrader's own tables.

nbgrader's ``Gradebook`` writes when it opens (it creates tables and the course row), so the tables
are read with a session that never commits, over a read-only connection for SQLite. A SQLite
gradebook that does not exist yet is not opened (opening it would create it).
"""
from __future__ import annotations

from pathlib import Path

SQLITE = "sqlite:///"


def read_only_url(db_url: str) -> str | None:
    """``db_url`` opened read-only where the driver can (SQLite); None for a SQLite file that does not exist."""
    if not db_url.startswith(SQLITE):
        return db_url
    path = Path(db_url[len(SQLITE):])
    if not path.is_file():
        return None
    return f"sqlite:///file:{path}?mode=ro&uri=true"


def person_scores(db_url: str, assignment: str, student: str) -> dict[str, float]:
    """grade_id -> the score a person set in formgrader (manual score plus extra credit, as nbgrader's
    Grade.score counts it) on the student's submission of ``assignment``; {} when none or no gradebook."""
    url = read_only_url(db_url)
    if url is None:
        return {}
    from nbgrader.api import Assignment, Grade, Student, SubmittedAssignment, SubmittedNotebook
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session
    engine = create_engine(url, future=True)
    try:
        with Session(engine) as session:
            grades = (session.query(Grade).join(SubmittedNotebook, Grade.notebook)
                      .join(SubmittedAssignment, SubmittedNotebook.assignment)
                      .join(Assignment, SubmittedAssignment.assignment).join(Student, SubmittedAssignment.student)
                      .filter(Assignment.name == assignment, Student.id == student, Grade.manual_score.isnot(None))
                      .all())
            scores = {g.name: float(g.manual_score) + float(g.extra_credit or 0.0) for g in grades}
            session.rollback()
    finally:
        engine.dispose()
    return scores
