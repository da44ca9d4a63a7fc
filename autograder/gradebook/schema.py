"""What nbgrader's gradebook can hold, checked before a student's rows are written, the same on every database.

nbgrader's models declare a student id as ``VARCHAR(128)``: PostgreSQL refuses a longer one, SQLite stores it.
PostgreSQL refuses a NUL in any text, and no database driver can send text that is not UTF-8 (a folder name's
undecodable bytes). A row the schema would refuse on one database is refused here on all of them, before it is
written, with one line saying why and what to do; the limits are read from nbgrader's own models, never typed
here. What no check foresaw (an instructor's late-penalty plugin raising for one student, a constraint nbgrader
adds later) is caught by writing that student alone (``scores.write_scores``): either way one student's row fails
only that student's row.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..inert import is_text, shown
from .messages import Scores

BY_HAND = ("this student's grade is in grades.csv and their feedback is written, but not in the gradebook: rename "
           "their folder in submitted/ to their id and run grade --resume, or enter the grade by hand")


@dataclass(frozen=True)
class Limits:
    """The lengths nbgrader's models give the columns a student's rows write (characters, as PostgreSQL counts)."""
    student_id: int

    @classmethod
    def of(cls, api) -> Limits:
        """From nbgrader's models (``nbgrader.api``): the tightest column a student id is written to."""
        columns = (api.Student.__table__.c.id, api.SubmittedAssignment.__table__.c.student_id)
        return cls(min(column.type.length for column in columns))


def refusal(s: Scores, limits: Limits) -> str | None:
    """Why nbgrader's gradebook cannot hold this student's rows (on any database), in one line; None if it can."""
    student = s.student
    if not is_text(student):
        return f"the student id {shown(student)} is not UTF-8 text, which nbgrader's gradebook cannot hold; {BY_HAND}"
    if "\x00" in student:
        return f"the student id {shown(student)} holds a NUL character, which PostgreSQL refuses; {BY_HAND}"
    if len(student) > limits.student_id:
        return (f"the student id {shown(student, 40)} is {len(student)} characters long, and nbgrader's gradebook "
                f"holds at most {limits.student_id} (its student.id column); {BY_HAND}")
    bad = sorted(g for g, v in s.earned.items() if not math.isfinite(v))
    if bad:
        return f"{shown(student)} has no finite score for {', '.join(map(shown, bad))}; {BY_HAND}"
    return None


def storable(text: str) -> str:
    """Text for a column of any database: a NUL (which PostgreSQL refuses) and undecodable bytes as escapes."""
    if is_text(text) and "\x00" not in text:
        return text
    return text.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")
