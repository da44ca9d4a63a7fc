"""A student's due date (the assignment's, plus their extension), read from the course's gradebook
through nbgrader's own tables, without ever writing it (``gradebook.readonly``). A gradebook that
does not exist yet, or holds no due date, means none is set.
"""
from __future__ import annotations

from datetime import datetime

from nbgrader.api import Assignment, Student, SubmittedAssignment   # imported when the service starts
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from ..gradebook.readonly import read_only_url


class DueDates:
    def __init__(self, db_url: str):
        self.db_url, self._engine = db_url, None

    def due(self, assignment: str, student: str) -> datetime | None:
        """The due date (naive UTC) with the student's extension; None when none is set."""
        url = read_only_url(self.db_url)
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
