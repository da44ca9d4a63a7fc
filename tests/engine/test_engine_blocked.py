"""Blocked (online-softmax) attention equals the naive path."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import solutions as S


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n, block", [(1000, 128), (513, 512), (64, 7)])
def test_blocked_equals_naive_float32(n, block, causal):
    rng = np.random.default_rng(n)
    Q, K, V = (rng.normal(size=(n, 64)).astype(np.float32) for _ in range(3))
    naive = S.causal_attention(Q, K, V)[0] if causal else S.scaled_dot_product_attention(Q, K, V)[0]
    got = S.blocked_attention(Q, K, V, causal=causal, block=block)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, naive, atol=2e-6, rtol=0)


@settings(max_examples=40, deadline=None)
@given(n_q=st.integers(1, 20), n_k=st.integers(1, 20), block=st.integers(1, 8),
       causal=st.booleans(), seed=st.integers(0, 1000))
def test_blocked_any_shape(n_q, n_k, block, causal, seed):
    rng = np.random.default_rng(seed)
    Q, K, V = rng.normal(size=(2, n_q, 3)), rng.normal(size=(2, n_k, 3)), rng.normal(size=(2, n_k, 4))
    mask = S.causal_mask(n_q, n_k) if causal else None
    naive = S.scaled_dot_product_attention(Q, K, V, mask=mask)[0]
    np.testing.assert_allclose(S.blocked_attention(Q, K, V, causal=causal, block=block), naive, atol=1e-12)


def test_blocked_large_scores():
    rng = np.random.default_rng(1)
    Q, K, V = rng.normal(0, 100, (50, 4)), rng.normal(0, 100, (50, 4)), rng.normal(size=(50, 4))
    got = S.blocked_attention(Q, K, V, causal=True, block=8)
    np.testing.assert_allclose(got, S.causal_attention(Q, K, V)[0], atol=1e-10)


def test_blocked_bad_block():
    z = np.zeros((2, 2))
    with pytest.raises(ValueError, match="block must be a positive integer"):
        S.blocked_attention(z, z, z, block=0)
