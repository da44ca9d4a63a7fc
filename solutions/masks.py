"""Additive attention masks: 0 where a query may look, -inf where it may not.

Masks combine by addition (``causal_mask(n) + padding_mask(lengths, n)``):
-inf plus anything is still -inf, and 0 + 0 stays 0.
"""
from __future__ import annotations

import numpy as np

NEG_INF = -np.inf


def causal_mask(n: int, n_k: int | None = None, dtype=np.float64):
    """(n, n_k) float mask, 0 on and below the diagonal, -inf above.

    ``n_k`` defaults to ``n``. The rectangular form is aligned top-left, as in
    ``torch.nn.functional.scaled_dot_product_attention(is_causal=True)``: query
    i sees keys 0..i. -inf is safe here because the diagonal is never masked,
    so no row is masked entirely.
    """
    n_k = n if n_k is None else n_k
    i = np.arange(n)[:, None]
    j = np.arange(n_k)[None, :]
    return np.where(j > i, NEG_INF, 0.0).astype(dtype)


def padding_mask(lengths, n: int, dtype=np.float64):
    """(batch, 1, n) mask hiding key positions at or beyond each sequence's length.

    Broadcasts against scores of shape (batch, n_q, n). A sequence of length 0
    masks every key; the engine then returns zero weights for that row.
    """
    lengths = np.asarray(lengths)
    if lengths.ndim != 1:
        raise ValueError(f"lengths must be 1-D (one per sequence); got shape {lengths.shape}")
    if np.any(lengths < 0) or np.any(lengths > n):
        raise ValueError(f"lengths must lie in [0, {n}]; got {lengths.tolist()}")
    j = np.arange(n)[None, None, :]
    return np.where(j >= lengths[:, None, None], NEG_INF, 0.0).astype(dtype)


def prefix_lm_mask(n: int, prefix: int, dtype=np.float64):
    """(n, n) mask: the first ``prefix`` positions see each other fully, the rest causally."""
    if not 0 <= prefix <= n:
        raise ValueError(f"prefix must lie in [0, {n}]; got {prefix}")
    mask = causal_mask(n, dtype=dtype)
    mask[:, :prefix] = 0.0
    return mask


def combine_masks(*masks):
    """Sum additive masks (broadcasting), the way the chapter combines them."""
    total = masks[0]
    for m in masks[1:]:
        total = total + m
    return total


def causal_tile(xp, q0: int, n_q: int, k0: int, n_k: int, dtype):
    """Additive causal mask for queries q0.. and keys k0.. in namespace ``xp``."""
    i = xp.arange(q0, q0 + n_q)[:, None]
    j = xp.arange(k0, k0 + n_k)[None, :]
    zero = xp.zeros((n_q, n_k), dtype=dtype)
    return xp.where(j > i, zero - xp.inf, zero)


def boolean_to_additive(xp, keep, dtype):
    """True = keep -> 0, False = hide -> -inf."""
    zero = xp.zeros(keep.shape, dtype=dtype)
    return xp.where(keep, zero, zero - xp.inf)
