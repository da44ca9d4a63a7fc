"""The coverage table (issue 37, item 2): every property that applies to a function is drawn by some check of
the rubric, whatever the student's seed, and a function that fails on such a case loses the check that owns it,
with a message that says which case."""
import functools
import math

import numpy as np
import pytest

import autograder
import solutions
from autograder.grading.coverage import APPLIES, PROPERTIES
from autograder.grading.rubric import RUBRIC
from autograder.grading.seeds import check_rng
from fixtures.impl import correct_plain as C

ENGINE = {k: v for k, v in vars(solutions).items() if callable(v)}


def _drawn(seed: int) -> set:
    """(function, property) of every question the rubric's checks declare for one student."""
    found = set()
    for grade_id, items in RUBRIC.items():
        for item in items:
            for q in item.check.ask(check_rng(seed, grade_id, item.name)).questions:
                if q.draws:
                    found.add((q.function, q.draws))
    return found


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_property_that_applies_to_a_function_is_drawn_by_a_check(seed):
    drawn = _drawn(seed)
    wanted = {(function, prop) for function, props in APPLIES.items() for prop in props}
    assert wanted - drawn == set(), "properties no check draws"
    assert drawn - wanted == set(), "properties drawn where the table says they do not apply"
    assert {p for _, p in drawn} <= set(PROPERTIES)


def _failed(**functions) -> dict:
    record = autograder.grade_namespace({**ENGINE, **functions}, "coverage")
    return {(c.grade_id, c.check): c.message for c in record.checks if not c.passed}


def test_a_cache_keyed_on_id_loses_the_value_check_for_every_student():
    """Fresh arrays with an old id() get the old answer: the pair of questions writes new values into the very
    arrays of the call before (it passed for 37 % of students when ids recurred by chance)."""
    def by_id(Q, K, V, cache={}):                                    # noqa: B006 - the mistake under test
        return cache.setdefault((id(Q), id(K), id(V)), C.cross_attention(Q, K, V))
    for student in ("ada", "grace", "alan", "edsger"):
        record = autograder.grade_namespace({**ENGINE, "cross_attention": by_id}, student)
        failed = {c.check: c.message for c in record.checks if not c.passed and c.grade_id == "ex4_cross"}
        assert set(failed) == {"matches_engine"}, (student, failed)
        assert "the same id()" in failed["matches_engine"]


@pytest.mark.parametrize("function, written, words", [
    ("softmax", lambda x, axis=-1: C.softmax(x, axis) if np.ndim(x) > 1 else x[0] / 0, "with a 1-D x"),
    ("softmax", lambda x, axis=-1: C.softmax(x, axis) if np.asarray(x).dtype.kind == "f" else np.zeros(np.shape(x)),
     "with an integer x"),
    ("scaled_dot_product_attention", lambda Q, K, V: (lambda w: (w @ V, w))(_in_place_scaled(Q, K)),
     "with integer inputs"),
    ("causal_attention", lambda Q, K, V: (lambda e: (lambda w: (w @ V, w))(e / e.sum(-1, keepdims=True)))(
        np.exp(Q @ K.T / np.sqrt(Q.shape[1])) * np.tri(len(Q))), "with scores in the thousands"),
])
def test_a_function_wrong_on_one_case_of_the_table_loses_its_value_check_and_hears_which(function, written, words):
    failed = _failed(**{function: written})
    grade_id = {"softmax": "ex1_softmax", "scaled_dot_product_attention": "ex1_attention",
                "causal_attention": "ex2_causal"}[function]
    value_check = {"ex1_softmax": "rows_sum_to_one", "ex1_attention": "weights_and_output_match",
                   "ex2_causal": "matches_engine"}[grade_id]
    assert (grade_id, value_check) in failed and words in failed[grade_id, value_check], failed


def _in_place_scaled(Q, K):
    scores = Q @ K.T
    scores /= np.sqrt(Q.shape[-1])                   # fails on integer inputs: an int array cannot hold the quotient
    return C.softmax(scores)


def test_a_default_kept_from_an_earlier_call_loses_the_defaults():
    """The defaults are asked right after a call with other values: a default that is the last value given
    shows there."""
    last = {"b": 2}

    def sticky(n, dtype_bytes=None):
        last["b"] = last["b"] if dtype_bytes is None else dtype_bytes
        return n * n * last["b"]
    failed = _failed(attention_memory_bytes=sticky)
    assert set(failed) == {("ex3_memory", "attention_bytes_exact")}
    assert "called without them it should count with the exercise's defaults" in failed["ex3_memory",
                                                                                         "attention_bytes_exact"]

    def sticky_axis(x, axis=None, state={"axis": -1}):            # noqa: B006 - the mistake under test
        state["axis"] = state["axis"] if axis is None else axis
        return C.softmax(x, state["axis"])
    failed = _failed(softmax=sticky_axis)
    assert ("ex1_softmax", "any_axis") in failed
    assert "it keeps the axis of an earlier call" in failed["ex1_softmax", "any_axis"]


def test_a_wrong_default_axis_is_said_to_be_the_default_and_charged_once():
    """def softmax(x, axis=0): it honours every axis it is given, so it is not told that it ignores `axis`; the
    value check (softmax(x) without `axis`) charges it, the axis check does not."""
    def default_zero(x, axis=0):
        return C.softmax(x, axis)
    failed = _failed(softmax=default_zero)
    assert set(failed) == {("ex1_softmax", "rows_sum_to_one")}
    said = failed["ex1_softmax", "rows_sum_to_one"]
    assert "the default of `axis` is wrong" in said and "ignored" not in said


@functools.lru_cache(maxsize=None)
def _engine_calls() -> dict:
    calls: dict = {}

    def wrap(name, fn):
        def student(*args, **kwargs):
            calls.setdefault(name, []).append((args, kwargs))
            return fn(*args, **kwargs)
        return student
    assert autograder.grade_namespace({k: wrap(k, v) for k, v in ENGINE.items()}, "space").total == 28
    return calls


def test_every_array_function_is_called_with_ties_integers_and_narrow_floats():
    calls = _engine_calls()
    for name in ("softmax", "scaled_dot_product_attention", "causal_attention", "cross_attention"):
        dtypes = {np.asarray(a[0]).dtype for a, _ in calls[name]}
        assert {np.dtype(np.float16), np.dtype(np.float32)} <= dtypes and any(d.kind == "i" for d in dtypes), name
    assert any(np.ndim(a[0]) == 1 for a, _ in calls["softmax"])
    big = [a for a, _ in calls["causal_attention"] if np.abs(a[0] @ a[1].T).max() / math.sqrt(a[0].shape[1]) > 1e3]
    assert big, "causal attention never sees large scores"
