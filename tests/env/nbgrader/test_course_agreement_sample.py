"""`grade` agrees with `nbgrader autograde` on honest work from the sample class, right and wrong: the half of
tests/env/nbgrader/test_course_agreement.py's class in a course of its own, so that two test workers autograde the two
halves side by side (nbgrader runs every notebook of every student, the suite's longest wait)."""
import pytest

from autograder.run.batch import grade_batch
from test_course_agreement import SAMPLE, _autograded, export_equals_grades_csv, totals_agree


@pytest.fixture(scope="module")
def sampled(tmp_path_factory):
    course, nbgrader_scores = _autograded(tmp_path_factory.mktemp("agreement-sample"), SAMPLE, {})
    return course, nbgrader_scores, grade_batch(course=course, workers=2, progress=False)


def test_totals_agree_with_nbgrader_autograde(sampled):
    totals_agree(sampled, SAMPLE)


def test_nbgrader_export_of_the_course_gradebook_equals_grades_csv(sampled):
    export_equals_grades_csv(sampled[0])
