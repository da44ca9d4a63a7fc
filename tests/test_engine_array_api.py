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
