"""A causal mask of one value everywhere names a family only next to an attention that computes: do-nothing
code (a zero mask beside an attention that computes nothing) is never named a misconception (DESIGN rule 4)."""
import numpy as np
import pytest

from autograder.grading.namespace import run_cell


def zero_mask(n):
    return np.full((n, n), 0.0)


def uniform_attention(Q, K, V):                 # computes nothing: the same weights whatever Q and K
    w = np.ones((len(Q), len(K))) / len(K)
    return w @ V, w


def attention_with_its_mask(Q, K, V):           # computes, with the student's own (zero) mask added
    scores = Q @ K.T / np.sqrt(K.shape[1]) + zero_mask(len(Q))
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    w = w / w.sum(axis=1, keepdims=True)
    return w @ V, w


def stub_attention(Q, K, V):
    raise NotImplementedError()


def _values(space, student):
    return next(r for r in run_cell(space, "ex2_mask", student) if r.check == "values")


@pytest.mark.parametrize("attention", [uniform_attention, stub_attention])
@pytest.mark.parametrize("student", ["kim", "lou"])
def test_a_zero_mask_beside_an_attention_that_computes_nothing_is_not_named(attention, student):
    got = _values({"causal_mask": zero_mask, "causal_attention": attention}, student)
    assert not got.passed and got.points == 0
    assert got.diagnosis is None and got.stage == "mask"
    assert "holds 0 everywhere" in got.message


@pytest.mark.parametrize("student", ["kim", "lou"])
def test_a_zero_mask_beside_an_attention_that_computes_is_mask_missing(student):
    got = _values({"causal_mask": zero_mask, "causal_attention": attention_with_its_mask}, student)
    assert not got.passed and got.diagnosis == "mask-missing"


def test_a_zero_mask_is_named_in_two_batches_as_every_cell_is():
    """A zero mask's family is named from the answers the values check already has (zeros at every size are the
    family's every answer) once the attention is shown to compute: no third round trip for ``ex2_mask``."""
    from autograder.grading.namespace import NotebookFunctions
    notebook = NotebookFunctions({"causal_mask": zero_mask, "causal_attention": attention_with_its_mask},
                                 "ex2_causal_mask")
    got = next(r for r in run_cell(notebook, "ex2_mask", "kim") if r.check == "values")
    assert got.diagnosis == "mask-missing" and notebook.rounds <= 2
