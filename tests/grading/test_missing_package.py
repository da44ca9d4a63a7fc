"""A student's import of a package the grading environment lacks is said as such and flagged for review, not
graded as a wrong answer; the grader's own packages, hidden from student code on purpose, are an ordinary
error (``grading.student.not_installed``, ``note_environment``)."""
import textwrap

import numpy as np

import autograder
import solutions
from autograder.sandbox.worker import _where

NOT_HERE = "course_softmax_helpers_not_installed"

USES_A_PACKAGE = f"""
import numpy as np

def softmax(x, axis=-1):
    from {NOT_HERE}.special import softmax as theirs      # installed on the student's laptop, not here
    return theirs(x, axis=axis)
"""

USES_THE_REFERENCE = """
def softmax(x, axis=-1):
    import solutions
    return solutions.softmax(x, axis=axis)
"""


def _graded(source: str, student: str):
    space = {"__name__": "__main__"}
    exec(compile(textwrap.dedent(source), "<student>", "exec"), space)
    return autograder.grade_namespace({**vars(solutions), **space}, student)


def test_a_package_missing_here_is_said_and_flagged_for_review():
    record = _graded(USES_A_PACKAGE, "env-1")
    failed = [c for c in record.checks if not c.passed]
    assert failed and all(f"imports `{NOT_HERE}`, which is not installed where the grader runs" in c.message
                          for c in failed if c.grade_id == "ex1_softmax")
    assert all("not a wrong answer" in c.message for c in failed if c.grade_id == "ex1_softmax")
    assert record.needs_review
    assert any(NOT_HERE in f.message and "grade it by hand" in f.message and f.notebook == "ex1_attention"
               and not f.accuses for f in record.findings)


def test_the_grader_s_own_package_is_no_environment_problem():
    record = _graded(USES_THE_REFERENCE, "env-2")
    assert not record.needs_review and record.findings == ()
    failed = [c for c in record.checks if c.grade_id == "ex1_softmax" and not c.passed]
    assert failed and not any("not installed" in c.message for c in failed)


def test_the_worker_reports_the_module_a_module_not_found_error_missed():
    try:
        __import__(NOT_HERE)
    except ModuleNotFoundError as exc:
        assert _where(exc, {})["missing"] == NOT_HERE
    try:
        np.nonexistent_name_here  # noqa: B018
    except AttributeError as exc:
        assert _where(exc, {})["missing"] is None
