"""A student's due date (the assignment's, plus their extension), read from the course's gradebook
through nbgrader's own tables, without ever writing it (``gradebook.readonly``). A gradebook that
does not exist yet, or holds no due date, means none is set; one that cannot be read (its server
down) means the due date is unknown, and ``watch`` then makes no decision that needs it.
"""
from __future__ import annotations

from datetime import datetime

from nbgrader.api import Assignment, Student, SubmittedAssignment   # imported when the service starts
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from ..gradebook.readonly import read_only_url
from ..gradebook.url import shown_url
from ..inert import one_line


class DueUnknown(Exception):
    """The gradebook could not be read for the due date that a decision about a submission needs."""


def short_error(exc: BaseException) -> str:
    """A database error in a few words: the driver's first line, not SQLAlchemy's statement and parameters
    (a PostgreSQL server that was down filled watch's log with 1,000 characters per submission)."""
    orig = getattr(exc, "orig", None) or exc
    first = (str(orig).strip().splitlines() or [""])[0]
    return f"{type(orig).__name__}: {first[:200]}"


class DueDates:
    def __init__(self, db_url: str):
        self.db_url, self._engine = db_url, None
        self.unread = False                   # the gradebook could not be read last time

    def due_or_wait(self, assignment: str, student: str, warn) -> datetime | None:
        """``due``; when the gradebook cannot be read, one line through ``warn`` (once, until it can be read
        again, which another line says) and ``DueUnknown``: feedback is never given as if no due date were
        set, nor a submission closed, on a guess."""
        try:
            due = self.due(assignment, student)
        except Exception as exc:  # noqa: BLE001 - an unreadable gradebook must not stop the service
            if not self.unread:
                warn(one_line(f"error: the gradebook {shown_url(self.db_url)} cannot be read for the due date "
                              f"({short_error(exc)}); submissions wait, and are checked once it can be"))
            self.unread = True
            raise DueUnknown from None
        if self.unread:
            self.unread = False
            warn("note: the gradebook can be read again; the submissions that waited are checked now")
        return due

    def due(self, assignment: str, student: str) -> datetime | None:
        """The due date (naive UTC) with the student's extension; None when none is set."""
        url = read_only_url(self.db_url)
        if url is None:
            return None
        if self._engine is None:
            self._engine = create_engine(url, future=True, pool_pre_ping=True)   # a server restarted since
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
