"""What the notebooks' hidden-test cells call (``nbgrader autograde`` runs them in the student's kernel).

``grade_cell`` runs one grade cell's rubric checks on the notebook's own
functions, prints one line per check to stdout and returns the points as the
cell's value, which nbgrader reads as partial credit. Nothing is written to
stderr: nbgrader scores any stderr output as 0, and a student's warning must
never cost points.
"""
from __future__ import annotations

import contextlib
import io
import os
import warnings
from pathlib import Path

import numpy as np

from .course.settings import find_course, load_course
from .grading.namespace import run_cell
from .records import earned
from .grading.seeds import student_seed


def current_student_id() -> str:
    """The student being graded: nbgrader autogrades in ``autograded/<student>/<assignment>/``."""
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        return Path.cwd().parent.name
    return os.environ.get("AUTOGRADER_STUDENT_ID", "anonymous")


def current_seed(student_id: str) -> int:
    """The student's seed for the course and assignment being autograded (as the hardened grader
    derives it); outside ``nbgrader autograde``, the bundled chapter's."""
    if os.environ.get("NBGRADER_EXECUTION") != "autograde":
        return student_seed(student_id)
    cwd = Path.cwd()
    return student_seed(student_id, load_course(find_course(cwd)).course_id, cwd.name)


def grade_cell(grade_id: str, namespace: dict, student_id: str | None = None) -> float:
    student_id = student_id or current_student_id()
    sink = io.StringIO()
    with contextlib.redirect_stderr(sink), warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        results = run_cell(namespace, grade_id, student_id, current_seed(student_id))
    for r in results:
        mark = "PASS" if r.passed else "FAIL"
        print(f"[{mark}] {r.check} ({r.points}/{r.max_points}): {r.message}")
    return float(earned(results))
