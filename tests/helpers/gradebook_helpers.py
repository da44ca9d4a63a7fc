"""A course gradebook filled through nbgrader's own API (no grading run), and readers of what it holds."""
from __future__ import annotations

from pathlib import Path

from autograder.gradebook.nbgrader_api import nbgrader_api, stamp_new
from autograder.gradebook.scores import record_assignment
from autograder.grading.rubric import RUBRIC

ASSIGNMENT = "ch04_attention"
FULL = {grade_id: float(sum(item.points for item in items)) for grade_id, items in RUBRIC.items()}


def fill_gradebook(url: str, course: Path, earned: dict[str, dict[str, float]], roster=(), emails=None) -> None:
    """The assignment's structure, then each student's auto scores (grade_id -> points, the rest full);
    ``roster``: students with no submission."""
    stamp_new(url)
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        record_assignment(gb, course, ASSIGNMENT)
        gb.db.commit()
    add_students(url, earned, roster, emails)


def add_students(url: str, earned: dict[str, dict[str, float]], roster=(), emails=None) -> None:
    """``fill_gradebook``'s students, in a gradebook that already holds the assignment (a copy of one
    ``fill_gradebook(url, course, {})`` made: recording the assignment takes seconds)."""
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        for student, scores in earned.items():
            gb.update_or_create_student(student, email=(emails or {}).get(student))
            submission = gb.add_submission(ASSIGNMENT, student)
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    grade.auto_score = scores.get(grade.name, FULL.get(grade.name, 0.0))
                    grade.needs_manual_grade = False
        for student in roster:
            gb.update_or_create_student(student, email=(emails or {}).get(student))
        gb.db.commit()


def set_grade(url: str, student: str, grade_id: str, *, manual=None, extra_credit=None, penalty=None) -> None:
    """What formgrader's GradeHandler.put saves (a manual score, extra credit), or a notebook's late penalty."""
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        submission = gb.find_submission(ASSIGNMENT, student)
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                if grade.name == grade_id:
                    grade.manual_score, grade.extra_credit = manual, extra_credit
                    grade.needs_manual_grade = manual is None and grade.auto_score is None
                    if penalty is not None:
                        notebook.late_submission_penalty = penalty
        gb.db.commit()
