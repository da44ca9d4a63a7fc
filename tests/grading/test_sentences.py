"""Every sentence true (issue 28, item 9): a message describes what the student returned.

A boolean mask is described by what its True means; BERT's -1e4 mask, which hides on ordinary scores in
float64, is not called "unhidden"; a softmax that divides by the sum and overflows is told it overflows,
not to divide by the sum.
"""
import numpy as np
import pytest

import autograder
import solutions
from test_rubric_coverage import _zeros_namespace

ENGINE = {k: getattr(solutions, k) for k in _zeros_namespace()}


def _messages(**functions) -> dict:
    record = autograder.grade_namespace({**ENGINE, **functions}, "sentences")
    return {(c.grade_id, c.check): c.message for c in record.checks if not c.passed}


def test_a_boolean_mask_is_described_by_what_its_true_means():
    hide = _messages(causal_mask=lambda n: np.triu(np.ones((n, n), dtype=bool), 1))["ex2_mask", "values"]
    assert "True where a position is hidden" in hide and "keep-mask" not in hide
    keep = _messages(causal_mask=lambda n: np.tril(np.ones((n, n), dtype=bool)))["ex2_mask", "values"]
    assert "keep-mask" in keep and "True where a position may look" in keep


def test_berts_minus_1e4_mask_is_said_to_hide_on_ordinary_scores_not_to_leave_the_future_unhidden():
    said = _messages(causal_mask=lambda n: np.triu(np.full((n, n), -1e4), 1))["ex2_mask", "values"]
    assert "unhidden" not in said and "hides the future with -10000" in said


@pytest.mark.parametrize("where", ["softmax", "attention"])
def test_a_softmax_that_overflows_is_not_told_to_divide_by_the_sum_it_divides_by(where):
    def overflowing(x, axis=-1):                          # divides by the sum; exp() overflows on large inputs
        e = np.exp(x)
        return np.nan_to_num(e / e.sum(axis=axis, keepdims=True))
    if where == "softmax":
        said = _messages(softmax=overflowing)["ex1_softmax", "stable_for_large_inputs"]
    else:
        sdpa = lambda Q, K, V: (lambda w: (w @ V, w))(overflowing(Q @ K.T / np.sqrt(Q.shape[-1])))   # noqa: E731
        said = _messages(scaled_dot_product_attention=sdpa)["ex1_attention", "stable_for_large_scores"]
    assert "overflows" in said and "subtract" in said
    assert "divide the exponentials by their sum" not in said and "divide each query's exponentials" not in said
