"""A point needs evidence, and the hidden tests cover the input space (issue 28, items 4, 6 and 7).

Do-nothing code (random rows normalised to 1, the inputs handed back, identity or uniform weights, code
right only on the visible tests' small shapes) earns the shape points and nothing more; every function is
called with a size of 1 in each dimension and with its default arguments; the value check uses two widths
and a state probe that changes one argument at a time; a function that raises on some shapes still hears
what the others show.
"""
import importlib

import numpy as np
import pytest

import autograder
import solutions
from autograder.grading.checks import ex1_attention
from autograder.grading.seeds import check_rng
from autograder.grading.student import NotebookFunctions
from fixtures.impl import correct_plain as C
from test_rubric_coverage import SHAPE_CHECKS, _zeros_namespace

ENGINE = {k: getattr(solutions, k) for k in _zeros_namespace()}


ATTENTION = ("softmax", "scaled_dot_product_attention", "causal_attention", "cross_attention")


def _fixture_namespace(name: str) -> dict:
    mod = importlib.import_module(f"fixtures.impl.{name}")
    return {k: getattr(mod, k) for k in _zeros_namespace()}


def _nothing_namespace(name: str, **extra) -> dict:
    """The fixture's attention functions; the mask and the counts compute nothing either (zeros, unless given)."""
    mod = importlib.import_module(f"fixtures.impl.{name}")
    return {**_zeros_namespace(), **{k: getattr(mod, k) for k in ATTENTION}, **extra}


def _even(x, axis=-1):
    return np.ones(np.shape(x)) / np.shape(x)[axis]


def _random_counts(*args, **kwargs):
    return int(np.random.randint(1, 10**6))


DO_NOTHING = {   # kind -> (namespace: nothing anywhere computes, points it earned before this change)
    "random": (lambda: _nothing_namespace(
        "nothing_random_rows_normalised", causal_mask=lambda n: np.random.random_sample((n, n)),
        attention_memory_bytes=_random_counts, ffn_memory_bytes=_random_counts, crossover_length=_random_counts), 12),
    "echo": (lambda: _nothing_namespace(
        "nothing_echoes_its_inputs", causal_mask=lambda n: np.full((n, n), float(n)),
        attention_memory_bytes=lambda n, dtype_bytes=2: dtype_bytes,
        ffn_memory_bytes=lambda n, d_model, dtype_bytes=2, expansion=4: d_model,
        crossover_length=lambda d_model, dtype_bytes=2, expansion=4: d_model), 6),
    "identity": (lambda: _nothing_namespace("nothing_identity_weights", softmax=_even), 4),
    "uniform": (lambda: _nothing_namespace("nothing_uniform_weights", softmax=_even), 4),
    "right only on small shapes": (lambda: _nothing_namespace("nothing_right_only_on_small_shapes"), 6),
    # round 5: deterministic junk, gaming (what a fresh class earned with them: 12/28 for the seeded rows)
    "random seeded by the inputs": (lambda: _nothing_namespace("nothing_random_rows_seeded_by_inputs"), 12),
    "a lookup of the visible values": (lambda: _nothing_namespace("nothing_lookup_of_visible_values"), None),
    "detects the grader": (lambda: _nothing_namespace("nothing_detects_the_grader"), None),
}


@pytest.mark.parametrize("kind", DO_NOTHING)
def test_do_nothing_code_earns_the_shape_points_and_nothing_more(kind):
    """It earned 12 (random), 6 (echo), 4 (identity, uniform) and 6 to 9 (small shapes) of 28."""
    ns = DO_NOTHING[kind][0]()
    if kind == "right only on small shapes":                      # its attention is the engine's, on its softmax
        softmax = ns["softmax"]
        ns.update(scaled_dot_product_attention=lambda Q, K, V: _attend(softmax, Q, K, V),
                  causal_attention=lambda Q, K, V: _attend(softmax, Q, K, V, causal=True),
                  cross_attention=lambda Q, K, V: _attend(softmax, Q, K, V))
    record = autograder.grade_namespace(ns, f"nothing-{kind}")
    passed = {(c.grade_id, c.check) for c in record.checks if c.passed}
    assert passed <= SHAPE_CHECKS, sorted(passed - SHAPE_CHECKS)
    assert record.total <= 3


def _attend(softmax, Q, K, V, causal=False):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    w = softmax(scores + (np.triu(np.full(scores.shape, -np.inf), 1) if causal else 0))
    return w @ V, w


def test_nan_output_is_told_nan_not_that_it_computes_nothing():
    """NaN everywhere equals itself for any input; it is the NaN checks' to name, never "computes nothing"."""
    nan = lambda Q, K, V: (np.full((len(Q), V.shape[1]), np.nan), np.full((len(Q), len(K)), np.nan))  # noqa: E731
    record = autograder.grade_namespace({**ENGINE, "causal_attention": nan, "cross_attention": nan}, "nan")
    failed = {(c.grade_id, c.check): c.message for c in record.checks if not c.passed}
    assert "NaN" in failed["ex2_causal", "rows_sum_to_one"] and "NaN" in failed["ex4_cross", "rows_sum_to_one"]
    assert not any("does not compute" in m for m in failed.values()), failed


# --- the space the hidden tests cover ------------------------------------------------------------

def _recording(calls: dict) -> dict:
    def wrap(name, fn):
        def student(*args, **kwargs):
            calls.setdefault(name, []).append((args, kwargs))
            return fn(*args, **kwargs)
        return student
    return {name: wrap(name, fn) for name, fn in ENGINE.items()}


def test_every_function_is_called_with_a_size_of_1_in_each_dimension_and_with_its_defaults():
    calls: dict = {}
    record = autograder.grade_namespace(_recording(calls), "space")
    assert record.total == 28
    for name in ("scaled_dot_product_attention", "cross_attention", "causal_attention"):
        shapes = [(a[0].shape, a[1].shape, a[2].shape) for a, _ in calls[name]]
        sizes = {"n_q": {q[0] for q, k, v in shapes}, "n_k": {k[0] for q, k, v in shapes},
                 "d_k": {q[1] for q, k, v in shapes}, "d_v": {v[1] for q, k, v in shapes}}
        assert all(1 in s for s in sizes.values()), (name, sizes)
    assert any(a == (1,) for a, _ in calls["causal_mask"])
    assert any(1 in np.shape(a[0]) for a, _ in calls["softmax"])
    assert any(len(a) == 1 and not kw for a, kw in calls["softmax"])                  # the default axis
    for name, given in (("attention_memory_bytes", 1), ("ffn_memory_bytes", 2), ("crossover_length", 1)):
        assert any(len(a) == given and not kw for a, kw in calls[name]), name         # its default arguments


def test_a_slip_right_at_one_width_is_caught_for_every_student():
    """Scores divided by sqrt(8) are right at d_k = 8: one width drawn from 2..9 passed it for 1 student in 8."""
    slip = lambda Q, K, V: (lambda w: (w @ V, w))(solutions.softmax(Q @ K.T / np.sqrt(8)))   # noqa: E731
    student = NotebookFunctions({**ENGINE, "scaled_dot_product_attention": slip}, "ex1_attention")
    for seed in range(40):
        outcome = ex1_attention.weights_and_output_match(student, check_rng(seed, "ex1_attention", "x"))
        assert not outcome.passed, seed


def test_a_cache_keyed_on_k_and_v_is_told_that_its_result_does_not_follow_q():
    def cached(Q, K, V, cache={}):                                  # noqa: B006 - state, on purpose
        return cache.setdefault((K.tobytes(), V.tobytes()), C.cross_attention(Q, K, V))
    record = autograder.grade_namespace({**ENGINE, "cross_attention": cached}, "kv-cache")
    failed = {(c.grade_id, c.check): c.message for c in record.checks if not c.passed}
    assert set(failed) == {("ex4_cross", "matches_engine")}
    assert "for the same K and V with a new Q as for its first inputs: its result does not follow Q" in \
        failed["ex4_cross", "matches_engine"]


def test_a_returned_buffer_and_a_cache_by_shape_are_told_apart():
    said = {}
    for name in ("state_returned_buffer_reused", "state_cached_by_shape"):
        record = autograder.grade_namespace(_fixture_namespace(name), name)
        said[name] = next(c.message for c in record.checks if not c.passed)
    assert "earlier results change when it is called again" in said["state_returned_buffer_reused"]
    assert "depends on the shapes only" not in said["state_returned_buffer_reused"]
    assert "depends on the shapes only" in said["state_cached_by_shape"]
    assert "earlier results" not in said["state_cached_by_shape"]


# --- the inputs a check runs on (item 4) ---------------------------------------------------------

def test_a_function_that_raises_on_some_shapes_is_told_the_error_and_what_the_others_show():
    def square_only(Q, K, V):                                       # right, but only when n_k == n_q
        if len(K) != len(Q):
            raise ValueError("operands could not be broadcast together")
        return C.cross_attention(Q, K, V)
    record = autograder.grade_namespace({**ENGINE, "cross_attention": square_only}, "square-only")
    failed = {(c.grade_id, c.check): c for c in record.checks if not c.passed}
    assert set(failed) == {("ex4_cross", c) for c in ("shapes", "matches_engine", "rows_sum_to_one")}
    for c in failed.values():
        assert "raised ValueError: operands could not be broadcast together" in c.message
        assert "It runs and is right with as many keys as queries (n_k = n_q)" in c.message


def test_the_square_input_check_judges_square_inputs_only():
    """ex4's no-causal-mask check is built on square inputs; its "does it compute" guard drew non-square ones,
    so a square causal mask copied from exercise 2 got numpy's broadcast error there, and its mistake unsaid."""
    record = autograder.grade_namespace(_fixture_namespace("cross_square_causal_mask"), "square-mask")
    check = next(c for c in record.checks if c.check == "no_causal_mask")
    assert check.diagnosis == "cross-causal-mask" and "raised" not in check.message



def test_a_cache_keyed_on_any_subset_of_the_arguments_loses_the_value_points_and_is_said():
    """The state probe changes each of K and V alone too (issue 28, item 6): a cache keyed on Q and K, on K
    alone or on Q and V returns an earlier answer for one of those calls, and the message says what was
    observed and which arguments the result did not follow."""
    mod = importlib.import_module("fixtures.diagnosis.localised__cached_on_some_arguments")
    mod._memo.clear()
    record = autograder.grade_namespace({**ENGINE, **{k: getattr(mod, k) for k in ATTENTION[1:]}}, "subset-cache")
    failed = {c.grade_id: c.message for c in record.checks if not c.passed}
    assert sorted(failed) == ["ex1_attention", "ex2_causal", "ex4_cross"]
    assert record.total == 28 - 6
    assert "returned the same output for the same Q and K with a new V as for its first inputs: its result " \
        "does not follow V. Is it cached on Q and K alone" in failed["ex1_attention"]
    assert "for the same K and V with a new Q as for its first inputs: its result does not follow Q and V. " \
        "Is it cached on K alone" in failed["ex2_causal"]
    assert "returned the same weights for the same Q and V with a new K as for its first inputs: its result " \
        "does not follow K. Is it cached on Q and V alone" in failed["ex4_cross"]


@pytest.mark.parametrize("count", [lambda n, b: -(-n * n * b // 10**9), lambda n, b: round(n * n * b / 1e9, 2),
                                   lambda n, b: 42], ids=["ceil GB", "GB to 2 places", "constant"])
def test_a_count_that_shows_nothing_of_dtype_bytes_earns_nothing_and_is_told_so_truly(count):
    """A count rounded to whole GB (or to 0.01 GB) does come from its arguments: the check that it follows
    dtype_bytes has no evidence either way, and says that, not that the count is computed from nothing."""
    rec = autograder.grade_namespace({"attention_memory_bytes": lambda n, dtype_bytes=2: count(n, dtype_bytes)}, "s")
    (check,) = [c for c in rec.checks if c.check == "attention_bytes_measured"]
    assert not check.passed and "has no evidence and earns nothing" in check.message, check.message
    assert "not computed from" not in check.message and "cannot follow" not in check.message


def test_a_wrong_count_is_read_once_for_the_family_and_the_localiser():
    """The bytes-as-gb family and the count localiser read the student's counts on the same inputs: the
    localiser takes the family's reading (one per probe) instead of calling the function again."""
    from autograder.grading.checks._base import Probe, mismatch
    calls = []

    def counted(n, dtype_bytes=2):
        calls.append(n)
        return n * n * n * dtype_bytes
    student = NotebookFunctions({"attention_memory_bytes": counted})
    said = {locate: (calls.clear(), mismatch("attention_memory_bytes", (300, 2), counted(300), "wrong.", locate=locate)
                     .resolve(Probe(student, "attention_memory_bytes")), len(calls))[1:] for locate in (False, True)}
    assert said[True][0].stage and not said[False][0].stage        # the localiser did name a stage
    assert said[True][1] == said[False][1]                         # and called nothing more to do it
