"""The values check pays for the part shown right (issue 37, item 5) in two realisations no check paid before:
both parts right and returned in the other order (outputs-swapped: the order is the shapes check's to charge),
and dropout left on (the weights right before a dropout whose fitted factor c = 1 / (1 - p) holds on every
weight it keeps); random rows, which no such factor fits, still earn nothing."""
import hashlib

import numpy as np
import pytest

from autograder.grading.namespace import run_cell


def swapped_cross(Q, K, V):
    s = np.einsum("qd,kd->qk", Q, K) / np.sqrt(Q.shape[1])
    w = np.exp(s - s.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    return w, np.einsum("qk,kv->qv", w, V)


def dropout_quarter(Q, K, V):
    s = Q @ K.T / np.sqrt(K.shape[1])
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    w = w * np.random.default_rng().binomial(1, 0.75, w.shape) / 0.75          # training-time dropout, p = 0.25
    return w @ V, w


def hashed_rows(Q, K, V):
    """Junk: rows drawn from a generator seeded by the inputs' bytes and a clock, normalised."""
    seed = int(hashlib.sha256(Q.tobytes() + K.tobytes()).hexdigest()[:8], 16) + np.random.randint(1 << 20)
    w = np.random.default_rng(seed).random((len(Q), len(K)))
    w /= w.sum(axis=1, keepdims=True)
    return w @ V, w


def _checks(name, fn, grade_id, student):
    return {r.check: r for r in run_cell({name: fn}, grade_id, student)}


@pytest.mark.parametrize("student", ["ann", "ben"])
def test_both_parts_right_in_the_other_order_keep_half_of_the_values(student):
    got = _checks("cross_attention", swapped_cross, "ex4_cross", student)
    assert got["shapes"].points == 0
    values = got["matches_engine"]
    assert not values.passed and values.points == 1 and values.diagnosis == "outputs-swapped"


@pytest.mark.parametrize("student", ["ann", "ben"])
def test_dropout_left_on_keeps_half_of_the_values_and_is_said(student):
    values = _checks("scaled_dot_product_attention", dropout_quarter, "ex1_attention", student)["weights_and_output_match"]
    assert not values.passed and values.points == 1 and values.stage == "state"
    assert "dropout with p = 0.25" in values.message


@pytest.mark.parametrize("student", ["ann", "ben"])
def test_random_rows_still_earn_nothing_of_the_values(student):
    values = _checks("scaled_dot_product_attention", hashed_rows, "ex1_attention", student)["weights_and_output_match"]
    assert not values.passed and values.points == 0
