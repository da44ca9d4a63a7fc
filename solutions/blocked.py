"""Blocked attention with an online softmax: memory O(n * block), not O(n^2).

Queries are taken ``block`` rows at a time; for each query block the keys are
visited ``block`` columns at a time while three running quantities are kept
per query row: the largest score seen (m), the sum of exp(score - m) (l) and
the weighted sum of values (acc). When a larger score arrives, the old l and
acc are rescaled by exp(m_old - m_new). The result equals softmax(S) V.
With ``causal=True`` key blocks lying wholly in a query block's future are
skipped, roughly halving the work.
"""
from __future__ import annotations

import math

from ._backend import as_arrays, check_attention_shapes
from .masks import causal_tile


def blocked_attention(Q, K, V, causal: bool = False, block: int = 512, scale=None):
    """Same output as ``scaled_dot_product_attention`` (causal: top-left aligned); output only."""
    if int(block) != block or block < 1:
        raise ValueError(f"block must be a positive integer; got {block!r}")
    xp, (Q, K, V) = as_arrays(Q, K, V, names=["Q", "K", "V"])
    check_attention_shapes(Q, K, V)
    scale = 1.0 / math.sqrt(Q.shape[-1]) if scale is None else scale
    n_q = Q.shape[-2]
    parts = [
        _query_block(xp, Q[..., i:min(i + block, n_q), :] * scale, K, V, i, block, causal)
        for i in range(0, n_q, block)
    ]
    if not parts:
        return xp.zeros(Q.shape[:-1] + (V.shape[-1],), dtype=Q.dtype)
    return xp.concat(parts, axis=-2)                                  # (..., n_q, d_v)


def _query_block(xp, q, K, V, q0, block, causal):
    """Online softmax over key blocks for queries q0 .. q0 + len(q) - 1."""
    n_k = K.shape[-2]
    m = xp.full(q.shape[:-1] + (1,), -xp.inf, dtype=q.dtype)         # (..., bq, 1)
    l = xp.zeros(q.shape[:-1] + (1,), dtype=q.dtype)
    acc = xp.zeros(q.shape[:-1] + (V.shape[-1],), dtype=q.dtype)     # (..., bq, d_v)
    last_key = min(n_k, q0 + q.shape[-2]) if causal else n_k
    for j in range(0, last_key, block):
        j_end = min(j + block, n_k)
        s = xp.matmul(q, xp.matrix_transpose(K[..., j:j_end, :]))       # (..., bq, bk)
        if causal and j_end - 1 > q0:
            s = s + causal_tile(xp, q0, q.shape[-2], j, s.shape[-1], s.dtype)
        m_new = xp.maximum(m, xp.max(s, axis=-1, keepdims=True))
        p = xp.exp(s - m_new)
        fix = xp.exp(m - m_new)                                          # rescale old sums
        l = l * fix + xp.sum(p, axis=-1, keepdims=True)
        acc = acc * fix + xp.matmul(p, V[..., j:j_end, :])
        m = m_new
    return acc / l

