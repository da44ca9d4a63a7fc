"""The same engine calls on array-api-strict arrays (the CPU stand-in for CuPy)."""
import numpy as np
import pytest

import solutions as S

xps = pytest.importorskip("array_api_strict")


def _pair(seed, *shapes):
    rng = np.random.default_rng(seed)
    arrays = [rng.normal(size=s) for s in shapes]
    return arrays, [xps.asarray(a) for a in arrays]


@pytest.mark.parametrize("fn", [S.scaled_dot_product_attention, S.causal_attention, S.cross_attention])
def test_attention_in_strict_namespace(fn):
    (Q, K, V), (q, k, v) = _pair(0, (5, 3), (5, 3), (5, 4))
    out, w = fn(q, k, v)
    assert type(out).__module__.startswith("array_api_strict")
    ref_out, ref_w = fn(Q, K, V)
    np.testing.assert_allclose(np.asarray(out), ref_out, atol=1e-12)
    np.testing.assert_allclose(np.asarray(w), ref_w, atol=1e-12)


def test_softmax_and_jacobian_strict():
    (x,), (xs,) = _pair(1, (3, 4))
    np.testing.assert_allclose(np.asarray(S.softmax(xs, axis=0)), S.softmax(x, axis=0))
    p = S.softmax(x)
    np.testing.assert_allclose(np.asarray(S.softmax_jacobian(xps.asarray(p))), S.softmax_jacobian(p))


def test_masks_and_blocked_strict():
    (Q, K, V), (q, k, v) = _pair(2, (2, 9, 3), (2, 9, 3), (2, 9, 2))
    keep = xps.asarray(np.tril(np.ones((9, 9), dtype=bool)))
    out, _ = S.scaled_dot_product_attention(q, k, v, mask=keep)
    np.testing.assert_allclose(np.asarray(out), S.causal_attention(Q, K, V)[0], atol=1e-12)
    got = S.blocked_attention(q, k, v, causal=True, block=4)
    np.testing.assert_allclose(np.asarray(got), S.causal_attention(Q, K, V)[0], atol=1e-12)


def test_strict_float32():
    (_,), (q,) = _pair(3, (4, 4))
    q32 = xps.astype(q, xps.float32)
    out, w = S.causal_attention(q32, q32, q32)
    assert out.dtype == xps.float32


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from loop_reference import loop_attention, loop_causal  # noqa: E402


@settings(max_examples=30, deadline=None)
@given(n_q=st.integers(1, 6), n_k=st.integers(1, 6), d=st.integers(1, 5), seed=st.integers(0, 10_000),
       causal=st.booleans(), big=st.sampled_from([1.0, 1e3]))
def test_strict_matches_loops(n_q, n_k, d, seed, causal, big):
    (Q, K, V), (q, k, v) = _pair(seed, (n_q, d), (n_k, d), (n_k, d + 1))
    q = q * big
    mask = S.causal_mask(n_q, n_k) if causal else None
    out, w = S.scaled_dot_product_attention(q, k, v, mask=None if mask is None else xps.asarray(mask))
    ref_out, ref_w = loop_attention(Q * big, K, V, mask=loop_causal(n_q, n_k) if causal else None)
    np.testing.assert_allclose(np.asarray(w), ref_w, atol=1e-10)
    np.testing.assert_allclose(np.asarray(out), ref_out, atol=1e-8)


@settings(max_examples=20, deadline=None)
@given(lengths=st.lists(st.integers(0, 4), min_size=1, max_size=3), seed=st.integers(0, 1000))
def test_strict_padding_rows_defined(lengths, seed):
    b = len(lengths)
    (_, _, _), (q, k, v) = _pair(seed, (b, 4, 3), (b, 4, 3), (b, 4, 2))
    mask = xps.asarray(S.combine_masks(S.causal_mask(4), S.padding_mask(lengths, 4)))
    out, w = S.scaled_dot_product_attention(q, k, v, mask=mask)
    assert not np.isnan(np.asarray(w)).any() and not np.isnan(np.asarray(out)).any()
