"""Each student's total for one assignment, read from nbgrader's gradebook as ``nbgrader export`` reads it.

nbgrader's CSV export gives every student of the gradebook a row per assignment: the submission's
score (the grades as a person left them: manual scores and extra credit count) less its late
penalty, never below 0, and 0 for a student who submitted nothing. The same API calls, the same
numbers: the LMS export (``outputs.lms``) writes these.
"""
from __future__ import annotations

from dataclasses import dataclass

from .url import check_gradebook_url
from .nbgrader_api import nbgrader_api


@dataclass(frozen=True)
class Total:
    """One student's total for the assignment, as ``nbgrader export`` has it: the score after late
    penalties and with manual grades (0 for a student of the roster who submitted nothing)."""
    student: str
    score: float
    max_score: float
    email: str = ""
    submitted: bool = True
    needs_manual_grade: bool = False      # a cell still awaits a person (formgrader): the score is not final


def assignment_totals(db_url: str, course_id: str, assignment: str) -> list[Total]:
    """One ``Total`` per student of the gradebook; ValueError when the gradebook does not hold ``assignment``."""
    check_gradebook_url(db_url, create=False, what="the gradebook")     # reading must never create one
    api = nbgrader_api()
    with api.Gradebook(db_url, course_id) as gb:
        try:
            entry = gb.find_assignment(assignment)
        except api.MissingEntry:
            known = ", ".join(a.name for a in gb.assignments) or "none"
            raise ValueError(f"the gradebook {db_url} holds no assignment {assignment!r} (it holds: {known}): "
                             "grade it first (python -m autograder grade)") from None
        maximum = float(entry.max_score or 0.0)
        totals = [_total(gb, api, assignment, student, maximum) for student in gb.students]
        gb.db.rollback()
    return totals


def _total(gb, api, assignment: str, student, maximum: float) -> Total:
    try:
        submission = gb.find_submission(assignment, student.id)
    except api.MissingEntry:
        return Total(student.id, 0.0, maximum, student.email or "", submitted=False)
    score = max(0.0, float(submission.score or 0.0) - float(submission.late_submission_penalty or 0.0))
    return Total(student.id, score, maximum, student.email or "", needs_manual_grade=bool(submission.needs_manual_grade))
