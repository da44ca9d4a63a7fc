"""Partial credit for each independently evidenced part (issue 37, item 5), checked against a written fair score.

A partial case of the development corpus (tests/fixtures/diagnosis/, ``FAIR = {grade_id: points}``) says what a
person would give each cell it writes; its cells must come within 1 point of that, for several students. The
instructor's points and categories are unchanged: a check keeps a share of its own points, never more.
"""
import functools
import importlib

import pytest

import autograder
from autograder.grading.rubric import RUBRIC, cell_max
from diagnosis_corpus import cases

PARTIAL = [c for c in cases() if getattr(importlib.import_module(c.module), "FAIR", None)]
STUDENTS = ("fair-ada", "fair-grace", "fair-alan")


@functools.lru_cache(maxsize=None)
def _cells(name: str, student: str) -> dict:
    case = next(c for c in PARTIAL if c.name == name)
    record = autograder.grade_namespace(case.namespace(), student)
    return {g: c.earned for g, c in record.cells.items()}, record


def test_the_development_corpus_has_partial_cases_with_a_fair_score():
    assert len(PARTIAL) >= 6
    for case in PARTIAL:
        fair = importlib.import_module(case.module).FAIR
        assert fair and all(0 <= points <= cell_max(g) for g, points in fair.items()), case.name


@pytest.mark.parametrize("student", STUDENTS)
@pytest.mark.parametrize("case", PARTIAL, ids=lambda c: c.name)
def test_a_partial_implementation_scores_within_a_point_of_its_fair_score(case, student):
    cells, record = _cells(case.name, student)
    fair = importlib.import_module(case.module).FAIR
    off = {g: (cells[g], points) for g, points in fair.items() if abs(cells[g] - points) > 1}
    assert off == {}, [c.message for c in record.checks if not c.passed]


@pytest.mark.parametrize("student", STUDENTS[:1])
@pytest.mark.parametrize("case", PARTIAL, ids=lambda c: c.name)
def test_a_check_keeps_at_most_its_own_points(case, student):
    _, record = _cells(case.name, student)
    weights = {(g, i.name): i.points for g, items in RUBRIC.items() for i in items}
    for c in record.checks:
        assert 0 <= c.points <= c.max_points == weights[c.grade_id, c.check]
        assert c.passed or c.points < c.max_points


def test_a_half_is_earned_only_by_a_part_shown_right():
    """The weights right and the output twice weights @ V keeps half the value check; the output wrong and the
    weights wrong too (no part right) keeps nothing."""
    import numpy as np
    import solutions

    def doubled(Q, K, V):
        out, w = solutions.scaled_dot_product_attention(Q, K, V)
        return 2 * out, w

    def both_wrong(Q, K, V):
        out, w = solutions.scaled_dot_product_attention(Q, K, V)
        return 2 * out, np.sqrt(w)
    engine = {k: v for k, v in vars(solutions).items() if callable(v)}
    for fn, kept in ((doubled, 1), (both_wrong, 0)):
        record = autograder.grade_namespace({**engine, "scaled_dot_product_attention": fn}, "half")
        (value,) = [c for c in record.checks if c.check == "weights_and_output_match"]
        assert not value.passed and value.points == kept


def test_partial_credit_comes_closer_to_the_fair_score_than_all_or_nothing():
    """Within a point is the issue's bound, which all-or-nothing also meets on a 2-point check; the credit must
    do better: on no case farther from the fair score than all-or-nothing, and closer in all."""
    ours, all_or_nothing = 0.0, 0.0
    for case in PARTIAL:
        cells, record = _cells(case.name, STUDENTS[0])
        for grade_id, points in importlib.import_module(case.module).FAIR.items():
            strict = sum(c.max_points for c in record.checks if c.grade_id == grade_id and c.passed)
            assert abs(cells[grade_id] - points) <= abs(strict - points), case.name
            ours, all_or_nothing = ours + abs(cells[grade_id] - points), all_or_nothing + abs(strict - points)
    assert ours < all_or_nothing
