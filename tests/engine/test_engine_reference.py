"""The engine against an independent float64 loop implementation, plus hypothesis properties."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import solutions as S
from loop_reference import loop_attention, loop_causal, loop_softmax

dims = st.integers(1, 7)


def _arrays(seed, *shapes, scale=1.0):
    rng = np.random.default_rng(seed)
    return [rng.normal(0, scale, s) for s in shapes]


@settings(max_examples=60, deadline=None)
@given(n_q=dims, n_k=dims, d_k=dims, d_v=dims, seed=st.integers(0, 2**32 - 1))
def test_attention_matches_loops(n_q, n_k, d_k, d_v, seed):
    Q, K, V = _arrays(seed, (n_q, d_k), (n_k, d_k), (n_k, d_v))
    out, w = S.scaled_dot_product_attention(Q, K, V)
    ref_out, ref_w = loop_attention(Q, K, V)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, rtol=1e-10, atol=1e-12)
    assert w.shape == (n_q, n_k) and out.shape == (n_q, d_v)


@settings(max_examples=40, deadline=None)
@given(n=dims, d=dims, seed=st.integers(0, 2**32 - 1))
def test_causal_matches_loops(n, d, seed):
    Q, K, V = _arrays(seed, (n, d), (n, d), (n, d + 1))
    out, w = S.causal_attention(Q, K, V)
    ref_out, ref_w = loop_attention(Q, K, V, mask=loop_causal(n, n))
    np.testing.assert_allclose(w, ref_w, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, atol=1e-10)
    assert np.all(np.triu(w, 1) == 0)


@settings(max_examples=40, deadline=None)
@given(batch=st.lists(st.integers(1, 3), min_size=1, max_size=2), n=dims, d=dims,
       seed=st.integers(0, 2**32 - 1))
def test_batch_axes_match_per_item(batch, n, d, seed):
    Q, K, V = _arrays(seed, (*batch, n, d), (*batch, n + 1, d), (*batch, n + 1, d))
    out, w = S.scaled_dot_product_attention(Q, K, V)
    for idx in np.ndindex(*batch):
        ref_out, ref_w = loop_attention(Q[idx], K[idx], V[idx])
        np.testing.assert_allclose(w[idx], ref_w, atol=1e-12)
        np.testing.assert_allclose(out[idx], ref_out, atol=1e-10)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 6), d=dims, seed=st.integers(0, 2**32 - 1),
       big=st.floats(1e3, 1e4))
def test_large_scores_stay_finite(n, d, seed, big):
    Q, K, V = _arrays(seed, (n, d), (n, d), (n, d))
    Q = Q / np.abs(Q).max() * big
    with np.errstate(all="raise", under="ignore"):
        out, w = S.scaled_dot_product_attention(Q, K * 1e2, V)
    assert np.all(np.isfinite(w)) and np.all(np.isfinite(out))
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), seed=st.integers(0, 1000),
       data=st.data())
def test_softmax_any_axis(shape, seed, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = np.random.default_rng(seed).normal(0, 1e4, shape)
    p = S.softmax(x, axis=axis)
    np.testing.assert_allclose(p.sum(axis=axis), 1.0, atol=1e-12)
    moved = np.moveaxis(x, axis, -1).reshape(-1, shape[axis])
    ref = np.array([loop_softmax(list(r)) for r in moved])
    np.testing.assert_allclose(np.moveaxis(p, axis, -1).reshape(-1, shape[axis]), ref, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(lengths=st.lists(st.integers(0, 5), min_size=1, max_size=3), seed=st.integers(0, 1000))
def test_padding_and_causal_masks_combine_by_addition(lengths, seed):
    n = 5
    Q, K, V = _arrays(seed, (len(lengths), n, 3), (len(lengths), n, 3), (len(lengths), n, 2))
    mask = S.combine_masks(S.causal_mask(n), S.padding_mask(lengths, n))
    with np.errstate(all="raise", under="ignore"):
        out, w = S.scaled_dot_product_attention(Q, K, V, mask=mask)
    for b, L in enumerate(lengths):
        ref_mask = [[0.0 if (j <= i and j < L) else -np.inf for j in range(n)] for i in range(n)]
        ref_out, ref_w = loop_attention(Q[b], K[b], V[b], mask=ref_mask)
        np.testing.assert_allclose(w[b], ref_w, atol=1e-12)
        np.testing.assert_allclose(out[b], ref_out, atol=1e-10)
    assert not np.isnan(w).any()


def test_boolean_mask_equals_additive():
    Q, K, V = _arrays(3, (4, 3), (4, 3), (4, 2))
    keep = np.tril(np.ones((4, 4), dtype=bool))
    a = S.scaled_dot_product_attention(Q, K, V, mask=keep)
    b = S.scaled_dot_product_attention(Q, K, V, mask=S.causal_mask(4))
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[0], b[0])


def test_scale_argument():
    Q, K, V = _arrays(4, (3, 5), (4, 5), (4, 2))
    out, w = S.scaled_dot_product_attention(Q, K, V, scale=1.0)
    ref_out, ref_w = loop_attention(Q, K, V, scale=1.0)
    np.testing.assert_allclose(w, ref_w, atol=1e-12)
