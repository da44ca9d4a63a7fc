"""Messages are true and complete: NaN is NaN, values as returned, exceptions with their text,
shape errors in the exercise's terms; localisation names the stage that deviates."""
import numpy as np
import pytest

import autograder
from autograder.misconceptions.localise import localise
from autograder.grading.student import as_returned
from fixtures.impl import correct_plain as C


def _failed(**functions):
    ns = {k: v for k, v in vars(C).items() if callable(v)}
    ns.update(functions)
    record = autograder.grade_namespace(ns, "messages")
    return {(c.grade_id, c.check): c for c in record.checks if not c.passed}


def test_nan_row_is_called_nan_and_costs_nan_and_row_sums_only():
    def causal(Q, K, V):
        out, w = C.causal_attention(Q, K, V)
        w = w.copy()
        w[0] = np.nan
        return w @ V, w
    failed = _failed(causal_attention=causal)
    assert set(failed) == {("ex2_causal", "matches_engine"), ("ex2_causal", "rows_sum_to_one"),
                           ("ex2_causal", "no_nan_single_token")}
    assert "Row 0 of the weights is NaN" in failed["ex2_causal", "rows_sum_to_one"].message
    assert "sums to" not in failed["ex2_causal", "rows_sum_to_one"].message


def test_masked_diagonal_is_not_charged_as_future_leakage():
    failed = _failed(causal_attention=lambda Q, K, V: _diag_masked(Q, K, V))
    assert ("ex2_causal", "no_future_leakage") not in failed
    assert ("ex2_causal", "first_row") not in failed
    assert sum(c.max_points for c in failed.values()) == 4


def _diag_masked(Q, K, V):
    w = C.softmax(Q @ K.T / np.sqrt(Q.shape[-1]) + np.triu(np.full((len(Q), len(K)), -np.inf)))
    return w @ V, w


@pytest.mark.parametrize("value, text", [(np.array(8), "8"), (np.int64(8), "8"), (8, "8"), (2.5e-07, "2.5e-07"),
                                         (np.array(1.5), "1.5"), ((1, np.array(2)), "(1, 2)"), (None, "None")])
def test_values_are_shown_as_returned(value, text):
    assert as_returned(value) == text


def test_a_returned_number_is_not_shown_as_an_array():
    failed = _failed(attention_memory_bytes=lambda n, dtype_bytes=2: np.array(8))
    message = failed["ex3_memory", "attention_bytes_exact"].message
    assert "= 8;" in message and "array(" not in message


def test_an_exception_without_a_message_says_so():
    def raises(*args, **kwargs):
        raise ValueError()
    message = _failed(softmax=raises)["ex1_softmax", "rows_sum_to_one"].message
    assert message.startswith("`softmax` raised ValueError (no message). Called with x of shape")


def test_the_stub_is_called_the_stub():
    def stub(Q, K, V):
        raise NotImplementedError()
    message = _failed(cross_attention=stub)["ex4_cross", "shapes"].message
    assert "is still the stub" in message and "raise NotImplementedError()" in message
    assert not message.endswith(":")


def test_a_shape_error_is_restated_with_the_exercise_shapes():
    def transposed_v(Q, K, V):
        w = C.softmax(Q @ K.T / np.sqrt(Q.shape[-1]))
        return w @ V.T, w
    message = _failed(scaled_dot_product_attention=transposed_v)["ex1_attention", "shapes"].message
    assert message.startswith("`scaled_dot_product_attention` raised ValueError: matmul")
    assert "Called with Q (" in message and "an output of shape (n_q, d_v) = (" in message
    assert "weights of shape (n_q, n_k) = (" in message


def test_output_differs_grammar():
    def bad_output(Q, K, V):
        out, w = C.scaled_dot_product_attention(Q, K, V)
        return out + 1, w
    message = _failed(scaled_dot_product_attention=bad_output)["ex1_attention", "weights_and_output_match"].message
    assert message.startswith("The output differs from the expected values.")


# --- localisation: from the student's own outputs, one sentence, one stage -----------------------

def _qkv(n_q=5, n_k=7, d_k=4, d_v=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n_q, d_k)), rng.normal(size=(n_k, d_k)), rng.normal(size=(n_k, d_v))


def _pair(scores_fn, Q, K, V, causal=False, axis=-1, out_fn=None):
    s = scores_fn(Q, K)
    if causal:
        s = s + np.triu(np.full(s.shape, -np.inf), 1)
    w = C.softmax(s, axis=axis)
    return (out_fn(w, V) if out_fn else w @ V), w


@pytest.mark.parametrize("function, kwargs, stage, words", [
    ("cross_attention", dict(scores_fn=lambda Q, K: Q @ K.T / 3.0), "scale", "times 0.3333"),
    ("cross_attention", dict(scores_fn=lambda Q, K: Q @ K.T / 2, axis=0), "softmax-axis", "column"),
    ("cross_attention", dict(scores_fn=lambda Q, K: (Q @ K.T) ** 2 / 2), "scores", "not a softmax of Q K^T"),
    ("cross_attention", dict(scores_fn=lambda Q, K: Q @ K.T / 2, out_fn=lambda w, V: w @ V[::-1]), "output",
     "not your own weights @ V"),
    ("causal_attention", dict(scores_fn=lambda Q, K: np.tril(Q @ K.T / 2)), "mask", "in its future"),
])
def test_localisation_names_the_stage(function, kwargs, stage, words):
    n = 6 if function == "causal_attention" else 5
    Q, K, V = _qkv(n_q=n, n_k=6 if function == "causal_attention" else 7)
    where = localise(function, (Q, K, V), _pair(Q=Q, K=K, V=V, **kwargs))
    assert where.stage == stage and words in where.sentence
    assert where.sentence.count(". ") == 0 and where.sentence.endswith(".")


def test_localisation_is_silent_on_right_answers():
    import solutions as S
    for seed in range(20):
        Q, K, V = _qkv(*np.random.default_rng(seed).integers(1, 9, size=4), seed=seed)
        assert localise("cross_attention", (Q, K, V), S.cross_attention(Q, K, V)) is None
        Qc, Kc, Vc = _qkv(n_q=len(Q), n_k=len(Q), d_k=Q.shape[1], seed=seed)
        assert localise("causal_attention", (Qc, Kc, Vc), S.causal_attention(Qc, Kc, Vc)) is None


def test_uncatalogued_mistake_gets_a_stage_in_the_record():
    failed = _failed(cross_attention=lambda Q, K, V: _pair(lambda q, k: q @ k.T / np.sqrt(len(k)), Q, K, V))
    check = failed["ex4_cross", "matches_engine"]
    assert check.diagnosis is None and check.stage == "scale"
    assert "1/sqrt(d_k)" in check.message


def test_a_nan_in_the_mask_is_called_nan():
    def nan_mask(n):
        m = np.triu(np.full((n, n), -np.inf), 1)
        m[0, -1] = np.nan
        return m
    message = _failed(causal_mask=nan_mask)["ex2_mask", "values"].message
    assert "is NaN;" in message


def _diagnosed(function, fn, args):
    """The diagnosis of ``fn`` standing for the student's ``function``, which failed on ``args``."""
    from autograder.grading.checks._base import Probe
    from autograder.misconceptions import diagnose
    from autograder.grading.student import NotebookFunctions
    return diagnose(function, args, fn(*args), Probe(NotebookFunctions({function: fn}), function))


@pytest.mark.parametrize("function, fn, args, expected", [
    ("ffn_memory_bytes", lambda n, d, b=2, e=4: n * d * 2, (512, 64, 4, 8), "expansion-missing+dtype-ignored"),
    ("crossover_length", lambda d, b=2, e=4: d + 1, (768, 2, 4), "expansion-missing+crossover-off-by-one"),
    ("attention_memory_bytes", lambda n, b=2: n * 2, (300, 4), "linear-in-n+dtype-ignored"),
])
def test_compounds_of_memory_mistakes_are_named(function, fn, args, expected):
    entry = _diagnosed(function, fn, args)
    assert entry.id == expected and entry.sentence.startswith("It looks like two mistakes together. First, ")


def test_a_part_that_a_constant_could_stand_for_is_not_named():
    """n * dtype_bytes * 8 is linear in n; whether the 8 is bits or a whole number written for the second
    n, the values cannot tell, so only linear-in-n is named, and n * d_model * 8 (no expansion, no dtype
    and bits, or expansion = 4 and fp16 written in) names nothing. A count that ignores expansion ignores it
    whatever whole number is written in its place (n * 8 * d_model * dtype_bytes: expansion-missing, the literal
    8 standing for it). A constant that no dtype's size or dimension could be (1e-9) does prove its part."""
    def named(function, fn, args):
        entry = _diagnosed(function, fn, args)
        return entry.id if entry else None
    assert named("attention_memory_bytes", lambda n, b=2: n * b * 8, (300, 4)) == "linear-in-n"
    assert named("ffn_memory_bytes", lambda n, d, b=2, e=4: n * d * 8, (300, 64, 4, 2)) is None
    assert named("ffn_memory_bytes", lambda n, d, b=2, e=4: n * 8 * d * b, (300, 64, 4, 2)) == "expansion-missing"
    assert named("ffn_memory_bytes", lambda n, d, b=2, e=4: n * d * b / 1e9, (300, 64, 4, 2)) \
        == "expansion-missing+bytes-as-gb"
    assert named("attention_memory_bytes", lambda n, b=2: n * n * 4, (300, 2)) == "dtype-ignored"
    assert named("attention_memory_bytes", lambda n, b=2: n * n * 2 / 1e9, (300, 4)) == "dtype-ignored+bytes-as-gb"
    assert named("attention_memory_bytes", lambda n, b=2: n * b / 1e9, (300, 4)) == "linear-in-n+bytes-as-gb"


def test_a_single_entry_is_preferred_to_a_compound():
    Q, K, V = _qkv()
    assert _diagnosed("cross_attention", lambda q, k, v: _pair(lambda a, b: a @ b.T, q, k, v), (Q, K, V)).id \
        == "no-scaling"


def test_a_softmax_error_is_restated_with_the_call_input_shape():
    def bad(x, axis=-1):
        return np.ones(2) @ x                            # a shape error inside the student's code
    failed = _failed(softmax=bad)
    message = failed["ex1_softmax", "any_axis"].message
    assert message.startswith("`softmax` raised ValueError: matmul")
    assert "Called with x of shape (" in message and "and axis=-1, it should return an array of shape" in message
    assert "slices along the last axis" in failed["ex1_softmax", "rows_sum_to_one"].message


def test_a_single_array_is_named_with_its_grammar_and_shape():
    from autograder.grading.student import StudentError, a_kind, to_pair
    with pytest.raises(StudentError) as exc:
        to_pair(np.zeros((3, 5)), "cross_attention")
    assert "got a numpy array of shape (3, 5)" in str(exc.value) and "a ndarray" not in str(exc.value)
    assert (a_kind(3), a_kind([1]), a_kind({}), a_kind(np.int64(1))) == ("an int", "a list", "a dict", "an int64")


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.longdouble, np.int8, np.int32, np.uint64])
def test_every_real_dtype_is_accepted_where_float64_is(dtype):
    """Answers in any real numpy dtype are graded by their values (float16 only where it is exact)."""
    def cast(fn):
        return lambda *a: tuple(np.asarray(v).astype(dtype) for v in fn(*a))
    floats = np.dtype(dtype).kind == "f"
    failed = _failed(causal_mask=lambda n: C.causal_mask(n).astype(np.longdouble),
                     attention_memory_bytes=lambda n, b=2: np.asarray(n * n * b).astype(np.uint64)[()],
                     crossover_length=lambda d, b=2, e=4: np.longdouble(e * d),
                     **({"cross_attention": cast(C.cross_attention),
                         "softmax": lambda x, axis=-1: C.softmax(x, axis).astype(dtype)} if floats else {}))
    assert failed == {}


def test_a_float16_answer_is_read_to_float16_precision_and_a_mistake_still_shows():
    half = lambda fn: lambda *a: tuple(np.asarray(v, dtype=np.float16) for v in fn(*a))     # noqa: E731
    unscaled = lambda Q, K, V: (lambda w: (w @ V, w))(C.softmax(Q @ K.T))                  # noqa: E731
    failed = _failed(scaled_dot_product_attention=half(unscaled), cross_attention=half(C.cross_attention))
    assert set(failed) == {("ex1_attention", "weights_and_output_match")}


def test_counts_that_overflow_or_change_unit_say_so():
    failed = _failed(attention_memory_bytes=lambda n, b=2: np.int32(n) * np.int32(n) * np.int32(b),
                     ffn_memory_bytes=lambda n, d, b=2, e=4: n * e * d * b // 2**20,
                     crossover_length=lambda d, b=2, e=4: e * d)
    overflow = failed["ex3_memory", "attention_bytes_exact"].message
    assert "but the exact count is 2,199,023,255,552: more than int32 holds" in overflow
    assert "`int(n)`" in overflow and "check every factor" not in overflow
    assert "floor-divided by 2**20 (`// 2**20`), a count in MiB" in failed["ex3_memory", "ffn_bytes_exact"].message
    assert set(failed) == {("ex3_memory", "attention_bytes_exact"), ("ex3_memory", "ffn_bytes_exact")}
    rounded = _failed(attention_memory_bytes=lambda n, b=2: np.float32(n) * n * b)["ex3_memory", "attention_bytes_exact"]
    assert "float32 holds whole numbers exactly only up to 16,777,216" in rounded.message


def test_a_unit_is_named_only_when_it_reproduces_several_answers():
    from autograder.grading.checks._counts import count_slip
    cases = [(1, 2), (3, 2), (256, 2)]
    exact = [2, 18, 131072]
    assert count_slip("attention_memory_bytes", cases, [0, 0, 0], exact) is None          # 0 fits every unit
    assert count_slip("attention_memory_bytes", cases, [0, 0, 128], exact) is None        # one answer is no proof
    assert "KiB" in count_slip("attention_memory_bytes", cases + [(1000, 2)], [0, 0, 128, 1953], exact + [2000000])
    assert count_slip("attention_memory_bytes", cases + [(1000, 2)], [0, 0, 128, 1954], exact + [2000000]) is None


# --- checks that catch state -----------------------------------------------------------------------

def test_a_cached_mask_changed_in_place_is_told_about_state_not_about_masking():
    import functools

    @functools.lru_cache(maxsize=None)
    def mask(n):
        return np.triu(np.full((n, n), -np.inf), 1)

    def causal(Q, K, V):
        m = mask(len(Q))
        m += Q @ K.T / np.sqrt(Q.shape[1])
        w = C.softmax(m)
        return w @ V, w
    failed = _failed(causal_mask=mask, causal_attention=causal)
    assert set(failed) == {("ex2_causal", "matches_engine")}
    message = failed["ex2_causal", "matches_engine"].message
    assert "changes between identical calls" in message and "lru_cache" in message
    assert "before the softmax" not in message and failed["ex2_causal", "matches_engine"].diagnosis is None


def test_each_function_is_asked_twice_with_the_same_arguments():
    calls = {"n": 0}

    def counting(n, dtype_bytes=2):
        calls["n"] += 1
        return n * n * dtype_bytes + (calls["n"] > 8)            # right until its ninth call
    message = _failed(attention_memory_bytes=counting)["ex3_memory", "attention_bytes_exact"].message
    assert message.startswith("attention_memory_bytes(1, 2) = 2 the first time and 3 when called again")

    def drifting(n, state={"k": 0}):                               # noqa: B006 - state, on purpose
        state["k"] += 1
        return np.triu(np.full((n, n), -np.inf if state["k"] % 2 else -1e10), 1)   # hides either way
    message = _failed(causal_mask=drifting)["ex2_mask", "values"].message
    assert "causal_mask(7) returned another array when called again with the same n" in message


def test_an_input_changed_in_place_costs_the_value_check_only():
    def scales_q_in_place(Q, K, V):
        Q /= np.sqrt(Q.shape[-1])
        w = C.softmax(Q @ K.T)
        return w @ V, w
    failed = _failed(cross_attention=scales_q_in_place)
    assert set(failed) == {("ex4_cross", "matches_engine")}
    assert failed["ex4_cross", "matches_engine"].message.startswith(
        "`cross_attention` changes its argument `Q` in place: after the call the caller's array holds other values")
