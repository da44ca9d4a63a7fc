"""The rubric never raises, whatever the student's functions return or raise."""
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autograder
from autograder.records import INTERNAL
from autograder.grading.rubric import RUBRIC
from autograder.grading.seeds import student_seed

FUNCTIONS = ["softmax", "scaled_dot_product_attention", "causal_mask", "causal_attention",
             "attention_memory_bytes", "ffn_memory_bytes", "crossover_length", "cross_attention"]


class Weird:
    def __array__(self, *a, **k):
        raise RuntimeError("no array for you")


arrays = st.builds(lambda shape, fill: np.full(shape, fill),
                   st.lists(st.integers(0, 4), max_size=3), st.sampled_from([0.0, np.nan, np.inf, 1e308, -1]))
values = st.one_of(
    st.none(), st.text(max_size=5), st.integers(-2**70, 2**70), st.floats(allow_nan=True), arrays,
    st.just(np.array([None, 1], dtype=object)), st.just(Weird()), st.just(np.array(["a"])),
    st.lists(st.floats(), max_size=4), st.just([[1, 2], [3]]), st.just(np.zeros(3, dtype=np.complex128)),
)
returns = st.one_of(values, st.tuples(values, values), st.tuples(values), st.tuples(values, values, values))
behaviours = st.one_of(returns.map(lambda v: ("return", v)),
                       st.sampled_from([ValueError, ZeroDivisionError, SystemExit, RecursionError])
                       .map(lambda e: ("raise", e)))


def _make(kind, payload):
    def fn(*args, **kwargs):
        if kind == "raise":
            raise payload("boom")
        return payload
    return fn


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(FUNCTIONS), behaviours))
def test_rubric_never_raises(spec):
    ns = {name: _make(*b) for name, b in spec.items()}
    record = autograder.grade_namespace(ns, "fuzz")
    assert 0 <= record.total <= record.max_total
    assert [(c.grade_id, c.check) for c in record.checks] == [(g, i.name) for g, items in RUBRIC.items() for i in items]
    for c in record.checks:
        assert c.message != INTERNAL, c
        assert c.passed or c.message.strip(), c                       # a lost point always says why


@pytest.mark.parametrize("count", [-2**63 - 1, 2**70, 10**400, -10**400], ids=["-2**63-1", "2**70", "10**400", "-10**400"])
def test_a_count_beyond_int64_or_any_float_is_a_wrong_answer_not_an_internal_error(count):
    """Found by the fuzzer above: numpy cannot test an int beyond int64, and no float holds 10**400."""
    rec = autograder.grade_namespace({"attention_memory_bytes": lambda n, dtype_bytes=2: count}, "s")
    checks = [c for c in rec.checks if c.check in ("attention_bytes_exact", "attention_bytes_measured")]
    assert len(checks) == 2 and not any(c.passed or c.message == INTERNAL for c in checks), checks


def test_a_count_whose_conversion_raises_is_a_wrong_answer_not_an_internal_error():
    """Found by the fuzzer above: the bytes-as-gb family read the count with float(np.asarray(...)), which
    a returned object's __array__ can make raise anything."""
    rec = autograder.grade_namespace({"attention_memory_bytes": lambda n, dtype_bytes=2: Weird()}, "s")
    checks = [c for c in rec.checks if c.check in ("attention_bytes_exact", "attention_bytes_measured")]
    assert len(checks) == 2 and not any(c.passed or c.message == INTERNAL for c in checks), checks


@pytest.mark.parametrize("empty", [np.array([]), np.zeros((0, 4)), np.zeros((3, 0))], ids=["0", "0x4", "3x0"])
def test_empty_weights_are_a_wrong_answer_not_an_internal_error(empty):
    """Found by the fuzzer above: the NaN scan reshaped an empty array to (0, -1), which numpy refuses."""
    rec = autograder.grade_namespace({"scaled_dot_product_attention": lambda Q, K, V: (0, empty)}, "s")
    checks = [c for c in rec.checks if c.grade_id == "ex1_attention"]
    assert checks and not any(c.passed or c.message == INTERNAL for c in checks), checks


def test_exception_message_reaches_student():
    rec = autograder.grade_namespace({"softmax": _make("raise", ValueError)}, "s")
    msgs = [c.message for c in rec.checks if c.grade_id == "ex1_softmax"]
    assert len(msgs) == 3 and all("`softmax` raised ValueError: boom" in m for m in msgs)


def test_wrong_arity_and_none_messages():
    rec = autograder.grade_namespace({"scaled_dot_product_attention": _make("return", (1, 2, 3)),
                                      "causal_attention": _make("return", None)}, "s")
    by = {(c.grade_id, c.check): c.message for c in rec.checks}
    assert "should return a pair (output, weights); got 3 values" in by[("ex1_attention", "shapes")]
    assert "returned None" in by[("ex2_causal", "first_row")]


def test_seeds_stable_distinct_and_not_hash_based():
    assert student_seed("alice") == student_seed("alice") != student_seed("bob")
    code = "from autograder.grading.seeds import student_seed; print(student_seed('alice'))"
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={"PYTHONHASHSEED": str(h), "PATH": ""}).stdout for h in (1, 2)}
    assert runs == {f"{student_seed('alice')}\n"}


def test_students_get_different_cases():
    seen = {}
    for student in ("alice", "bob"):
        calls = []
        def spy(Q, K, V):
            calls.append(Q.copy())
            return np.zeros(1), np.zeros(1)
        autograder.grade_namespace({"scaled_dot_product_attention": spy}, student)
        seen[student] = calls[0]
    assert seen["alice"].shape != seen["bob"].shape or not np.allclose(seen["alice"], seen["bob"])


def test_rubric_table_is_well_formed():
    assert list(RUBRIC) == sorted(RUBRIC, key=lambda g: g[:3])          # exercises in order
    for grade_id, items in RUBRIC.items():
        assert grade_id[:3] in {"ex1", "ex2", "ex3", "ex4"}
        assert all(i.points > 0 and i.category in {"correctness", "masking", "memory"} for i in items)
        assert len({i.name for i in items}) == len(items)
    assert autograder.max_total() == 28
