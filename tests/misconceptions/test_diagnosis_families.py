"""Issue 28 (round 4): a misconception is a family identified by what it breaks; competing explanations are
settled before a stage is named; NaN is said first; counts are read at the answer's resolution.

The realisations themselves are cases of the development corpus (tests/fixtures/diagnosis/, named by
what they should be named) and are checked there (test_diagnosis_corpus.py); these tests pin each rule.
"""
import math

import numpy as np
import pytest

import autograder
from autograder.grading.checks._base import Probe
from autograder.misconceptions import diagnose, diagnose_square
from autograder.misconceptions.families import empty_rows_free, hidden_set, mask_values_in_weights
from autograder.misconceptions.localise import localise
from autograder.grading.student import NotebookFunctions
from diagnosis_corpus import Case, cases
from fixtures.impl.correct_plain import causal_attention as right_causal, softmax

RNG = np.random.default_rng(28)


def _probe(function, fn):
    return Probe(NotebookFunctions({function: fn}), function)


def _named(function, fn, args):
    found = diagnose(function, args, fn(*args), _probe(function, fn))
    return found.id if found else None


def _where(function, fn, args):
    with np.errstate(all="ignore"):
        return localise(function, args, fn(*args), _probe(function, fn))


def _qkv(n_q, n_k, d_k=4, d_v=3):
    return RNG.normal(size=(n_q, d_k)), RNG.normal(size=(n_k, d_k)), RNG.normal(size=(n_k, d_v))


# --- 1. families ---------------------------------------------------------------------------------------

def _hidden_diagonal(then):
    """Causal attention with j >= i hidden, and the first row (nothing left to see) made ``then``."""
    def causal(Q, K, V):
        s = Q @ K.T / np.sqrt(Q.shape[-1])
        s = np.where(np.triu(np.ones(s.shape, dtype=bool)), -np.inf, s)
        with np.errstate(invalid="ignore"):
            w = np.exp(s - s.max(-1, keepdims=True))
            w = w / w.sum(-1, keepdims=True)
        w[0] = then(len(K))
        return w @ V, w
    return causal


@pytest.mark.parametrize("then", [lambda n: np.full(n, np.nan), lambda n: np.full(n, 1 / n), lambda n: np.zeros(n),
                                  lambda n: np.eye(1, n)[0] * 0.5])
def test_the_diagonal_hidden_is_named_whatever_becomes_of_the_empty_row(then):
    assert _named("causal_attention", _hidden_diagonal(then), _qkv(5, 5)) == "diagonal-masked"


def test_a_view_compares_only_what_the_family_fixes():
    Q, K, V = _qkv(4, 4)
    out, w = right_causal(Q, K, V)
    freed = empty_rows_free((Q, K, V), (out, w))
    assert np.isnan(freed[1][0]).all() and np.array_equal(freed[1][1:], w[1:])
    masked = mask_values_in_weights((Q, K, V), (out, w - 1e9 * np.triu(np.ones_like(w), 1)))
    assert np.isnan(masked[0]).all() and np.isneginf(masked[1][0, 1:]).all()
    assert np.isneginf(hidden_set((3,), np.triu(np.full((3, 3), -1e9), 1))[0, 1:]).all()
    keep = np.tril(np.ones((3, 3), dtype=bool))
    assert hidden_set((3,), keep) is keep                          # truth values are not a hidden set
    assert empty_rows_free((Q, K, V), "not a pair") == "not a pair"


def test_hiding_everything_is_not_the_diagonal_hidden():
    """The rows with keys left to see must be the diagonal-masked ones: a mask that hides every key is not. Nor is
    NaN everywhere any compound whose variant is NaN everywhere (the -inf diagonal with each row's maximum
    subtracted before a whole-array sum): a variant that is NaN everywhere reproduces nothing (proof.py)."""
    def everything(Q, K, V):
        w = np.full((len(Q), len(K)), np.nan)
        return w @ V, w
    assert _named("causal_attention", everything, _qkv(5, 5)) is None


@pytest.mark.parametrize("fn, mid", [
    (lambda x, axis=-1: np.exp(x - x.max(1, keepdims=True)) / np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True),
     "softmax-wrong-axis"),
    (lambda x, axis=-1: np.exp(x - x.max(axis, keepdims=True)) / np.exp(x - x.max(axis, keepdims=True)).sum(),
     "softmax-global-sum"),
    (lambda x, axis=-1: np.exp(x - np.log(np.exp(x).sum(axis, keepdims=True))), "no-max-subtraction"),
])
def test_softmax_families(fn, mid):
    x = RNG.normal(size=(3, 4, 5))
    args = (x * 1e4,) if mid == "no-max-subtraction" else (x, 0)
    with np.errstate(all="ignore"):
        assert _named("softmax", fn, args) == mid


def test_the_square_mask_copied_into_cross_attention_is_named_where_it_runs():
    def cross(Q, K, V):
        s = Q @ K.T / np.sqrt(Q.shape[-1]) + np.triu(np.full((len(Q), len(Q)), -np.inf), 1)
        w = softmax(s)
        return w @ V, w
    args = _qkv(3, 5)
    with pytest.raises(ValueError):
        cross(*args)
    assert diagnose_square("cross_attention", args, _probe("cross_attention", cross)).id == "cross-causal-mask"
    right = lambda Q, K, V: (softmax(Q @ K.T / 2) @ V, softmax(Q @ K.T / 2))     # noqa: E731 - no square-only fault
    assert diagnose_square("cross_attention", args, _probe("cross_attention", right)) is None


# --- 2. competing explanations ---------------------------------------------------------------------------

def test_square_weights_returned_transposed_are_not_told_the_softmax_normalises_over_the_queries():
    def transposed(Q, K, V):
        out, w = right_causal(Q, K, V)
        return out, w.T
    where = _where("causal_attention", transposed, _qkv(5, 5))
    assert where.stage == "layout" and "transposed" in where.sentence
    assert "over the queries" not in where.sentence


def test_a_softmax_applied_twice_is_said_to_be_applied_twice():
    def twice(Q, K, V):
        w = softmax(softmax(Q @ K.T / np.sqrt(Q.shape[-1])))
        return w @ V, w
    where = _where("scaled_dot_product_attention", twice, _qkv(4, 6))
    assert where.stage == "softmax" and "applied twice" in where.sentence


def test_an_empty_row_is_read_from_the_visible_sets():
    def hidden(Q, K, V):                       # the diagonal hidden and an uncatalogued scale: nothing named
        s = Q @ K.T / np.sqrt(len(Q))
        s[np.triu_indices(len(Q))] = -1e9
        w = softmax(s)
        return w @ V, w
    where = _where("causal_attention", hidden, _qkv(6, 6))
    assert where.stage == "mask" and "diagonal is hidden" in where.sentence and "uniform" in where.sentence
    assert "does not hide j > i" not in where.sentence and "normalisation" not in where.sentence


def test_weights_kept_from_an_earlier_call_are_said_to_be_kept():
    cache = {}

    def cached(Q, K, V):
        w = cache.setdefault((Q.shape, K.shape), softmax(Q @ K.T / np.sqrt(Q.shape[-1])))
        return w @ V, w
    args = _qkv(4, 6)
    cached(*_qkv(4, 6))                        # an earlier call with other values of the same shapes
    where = _where("cross_attention", cached, args)
    assert where.stage == "state" and "same weights" in where.sentence


@pytest.mark.parametrize("large, words", [(True, "exp() overflows"), (False, "where no exp() overflows")])
def test_nan_is_told_overflow_only_when_smaller_inputs_are_finite(large, words):
    def unstable(Q, K, V):
        e = np.exp(Q @ K.T) if large else np.exp(Q @ K.T) * 0.0
        w = e / e.sum(-1, keepdims=True)
        return w @ V, w
    Q, K, V = _qkv(4, 6)
    where = _where("cross_attention", unstable, (Q * 300, K * 300, V) if large else (Q, K, V))
    assert where.stage == "nan" and words in where.sentence and "NaN" in where.sentence


# --- 3. NaN first ------------------------------------------------------------------------------------------

def test_nan_everywhere_is_said_to_be_nan_not_cached_constant_or_computing_nothing():
    case = next(c for c in cases() if c.name == "localised__nan_everywhere")
    record = autograder.grade_namespace(case.namespace(), "nan-first")
    failed = [c for c in record.checks if not c.passed and c.grade_id == "ex1_attention"]
    assert failed and all("NaN everywhere" in c.message for c in failed)
    for words in ("cached", "a constant", "does not compute"):
        assert not any(words in c.message for c in failed)


def test_nan_in_part_says_where():
    def first_row_nan(Q, K, V):
        out, w = right_causal(Q, K, V)
        w = w.copy()
        w[2] = np.nan
        return w @ V, w
    where = _where("causal_attention", first_row_nan, _qkv(5, 5))
    assert where.stage == "nan" and "row 2 of 5" in where.sentence


# --- 5. counts at the answer's resolution -------------------------------------------------------------------

@pytest.mark.parametrize("function, fn, args, stage, words", [
    ("attention_memory_bytes", lambda n, b=2: round(n * n * b / 1e9, 2), (1, 2), "unit", "rounded to 2 decimals"),
    ("ffn_memory_bytes", lambda n, d, b=2, e=4: math.ceil(n * e * d * b / 1e9), (1, 64, 1, 4), "unit", "rounded up"),
    ("ffn_memory_bytes", lambda n, d, b=2, e=4: n * (1 + e) * d * b, (1, 64, 1, 4), "expansion", "does not grow"),
    ("attention_memory_bytes", lambda n, b=2: round(n ** 1.5 * b), (3, 2), "n", "by 2.828"),
    ("attention_memory_bytes", lambda n, b=2: round(n ** 3 * b / 1e9, 2), (1, 2), "n", "by 8"),
])
def test_a_count_is_localised_at_the_answers_resolution(function, fn, args, stage, words):
    where = localise(function, args, fn(*args), _probe(function, fn))
    assert where.stage == stage and words in where.sentence
    assert "check each factor" not in where.sentence


def test_a_count_that_is_only_nearly_right_stays_unnamed():
    triangle = lambda n, b=2: n * (n + 1) // 2 * b                     # noqa: E731
    assert localise("attention_memory_bytes", (3, 2), triangle(3, 2), _probe("attention_memory_bytes", triangle)) is None


def test_the_development_part_is_the_default_and_a_missing_part_is_empty():
    assert cases() and all(isinstance(c, Case) and c.package == "diagnosis" for c in cases())
    assert cases() == cases("development")
