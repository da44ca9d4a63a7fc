"""What a student sees before the deadline, for each of the instructor's choices: the full page, the
diagnosis without points, or the visible tests only; never a hidden test or the reference code
(slow: grades one submission in the sandbox, with its visible tests)."""
import re

import pytest

from autograder.samples.synthetic import reference_answers
from autograder.run.grader import grade
from autograder.watch.grading import inbound_job
from autograder.watch.pages import feedback_page
from batch_helpers import make_class
from conftest import NOTEBOOKS

A = "ch04_attention"


@pytest.fixture(scope="module")
def graded(tmp_path_factory, server):
    course = make_class(tmp_path_factory.mktemp("pages"), ["mask-after-softmax"])
    folder = course / "submitted" / "mask-after-softmax" / A
    return course, grade(inbound_job(course, A, folder, "ada", True, "ada+" + A), server)


def _reference_lines(course):
    """Lines of the instructor's solutions that the release does not show."""
    release = "".join(p.read_text() for p in (course / "release" / A).glob("*.ipynb"))
    return {line.strip() for cells in reference_answers(course / "source" / A).values() for code in cells.values()
            for line in code.splitlines() if len(line.strip()) > 25 and line.strip() not in release}


@pytest.mark.parametrize("show", ["full", "diagnosis", "visible"])
def test_no_page_shows_a_hidden_test_or_the_reference_code(graded, show):
    course, result = graded
    secret = _reference_lines(course)
    assert secret
    for notebook in NOTEBOOKS:
        page = feedback_page(result.record, notebook, show, 0.0, result.visible.get(notebook, []))
        assert "Pre-deadline feedback" in page and "made 1970-01-01 00:00:00 UTC" in page
        assert "BEGIN HIDDEN TESTS" not in page and "grade_cell(" not in page
        assert not [line for line in secret if line in page]


def test_full_shows_the_score_and_the_misconception(graded):
    _, result = graded
    page = feedback_page(result.record, "ex2_causal_mask", "full", 0.0)
    assert re.search(r"Score: \d+ / 9", page) and "mask-after-softmax" in page


def test_diagnosis_shows_the_advice_and_misconception_without_points(graded):
    _, result = graded
    page = feedback_page(result.record, "ex2_causal_mask", "diagnosis", 0.0)
    assert "mask-after-softmax" in page and "Start here" in page
    assert "Score" not in page and not re.search(r"<td>\d+/\d+</td>", page)


def test_visible_shows_only_the_visible_tests_results(graded):
    _, result = graded
    ex2 = {r.grade_id: r for r in result.visible["ex2_causal_mask"]}
    assert set(ex2) == {"ex2_mask_visible", "ex2_causal_visible"}
    assert ex2["ex2_mask_visible"].passed is True
    assert ex2["ex2_causal_visible"].passed is False and "before softmax" in ex2["ex2_causal_visible"].message
    assert all(r.passed for r in result.visible["ex1_attention"])
    page = feedback_page(result.record, "ex2_causal_mask", "visible", 0.0, result.visible["ex2_causal_mask"])
    assert "ex2_causal_visible" in page and "before softmax" in page
    assert "Score" not in page and "mask-after-softmax" not in page and "no_future_leakage" not in page.replace(" ", "_")
