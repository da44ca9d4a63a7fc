"""Messages are true and complete: NaN is NaN, values as returned, exceptions with their text,
shape errors in the exercise's terms; localisation names the stage that deviates."""
import numpy as np
import pytest

import autograder
from autograder.misconceptions.localise import localise
from autograder.student import shown
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
    assert shown(value) == text


def test_a_returned_number_is_not_shown_as_an_array():
    failed = _failed(attention_memory_bytes=lambda n, dtype_bytes=2: np.array(8))
    message = failed["ex3_memory", "attention_bytes_exact"].message
    assert "= 8;" in message and "array(" not in message


def test_an_exception_without_a_message_says_so():
    def raises(*args, **kwargs):
        raise ValueError()
    message = _failed(softmax=raises)["ex1_softmax", "rows_sum_to_one"].message
    assert message == "`softmax` raised ValueError (no message)"


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


@pytest.mark.parametrize("function, args, value, expected", [
    ("ffn_memory_bytes", (512, 64, 4, 8), 512 * 64 * 2, "expansion-missing+dtype-ignored"),
    ("crossover_length", (768, 2, 4), 769, "expansion-missing+crossover-off-by-one"),
    ("attention_memory_bytes", (300, 4), 300 * 4 * 8, "linear-in-n+bits-not-bytes"),
])
def test_compounds_of_memory_mistakes_are_named(function, args, value, expected):
    from autograder.misconceptions import diagnose
    entry = diagnose(function, args, value)
    assert entry.id == expected and entry.sentence.startswith("It looks like two mistakes together. First, ")


def test_a_single_entry_is_preferred_to_a_compound():
    from autograder.misconceptions import diagnose
    Q, K, V = _qkv()
    out, w = _pair(lambda q, k: q @ k.T, Q, K, V)
    assert diagnose("cross_attention", (Q, K, V), (out, w)).id == "no-scaling"
