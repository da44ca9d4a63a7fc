"""A student's due date (the assignment's, plus their extension), read from the course's gradebook
through nbgrader's own tables, without ever writing it.

nbgrader's ``Gradebook`` writes when it opens (it creates tables and the course row), so the tables
are read here with a session that never commits, over a read-only connection for SQLite. A
gradebook that does not exist yet, or holds no due date, means none is set.
"""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

from nbgrader.api import Assignment, Student, SubmittedAssignment   # imported when the service starts
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

SQLITE = "sqlite:///"


class DueDates:
    def __init__(self, db_url: str):
        self.db_url, self._engine = db_url, None

    def _url(self) -> str | None:
        if not self.db_url.startswith(SQLITE):
            return self.db_url
        path = Path(self.db_url[len(SQLITE):])
        if not path.is_file():
            return None                            # opening it would create it
        return f"sqlite:///file:{path}?mode=ro&uri=true"

    def due(self, assignment: str, student: str) -> datetime | None:
        """The due date (naive UTC) with the student's extension; None when none is set."""
        url = self._url()
        if url is None:
            return None
        if self._engine is None:
            self._engine = create_engine(url, future=True)
        with Session(self._engine) as session:
            row = session.query(Assignment).filter(Assignment.name == assignment).one_or_none()
            if row is None or row.duedate is None:
                return None
            sub = (session.query(SubmittedAssignment).join(Assignment).join(Student)
                   .filter(Assignment.name == assignment, Student.id == student).one_or_none())
            due = sub.duedate if sub is not None else row.duedate
            session.rollback()
        return due

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
