"""Numerically stable softmax and its Jacobian."""
from __future__ import annotations

from ._backend import as_arrays


def softmax(x, axis: int = -1):
    """exp(x - max) / sum(exp(x - max)) along ``axis``; any shape.

    Subtracting the row maximum keeps exp() from overflowing at |x| ~ 1e4.
    A slice that is entirely -inf (every key masked) gives all zeros rather
    than NaN, so a fully padded row attends to nothing.
    """
    xp, (x,) = as_arrays(x, names=["x"])
    m = xp.max(x, axis=axis, keepdims=True)
    m = xp.where(xp.isinf(m) & (m < 0), xp.zeros_like(m), m)   # all -inf: shift by 0
    e = xp.exp(x - m)
    s = xp.sum(e, axis=axis, keepdims=True)
    return e / xp.where(s == 0, xp.ones_like(s), s)


def softmax_jacobian(p):
    """d softmax / d x = diag(p) - p p^T over the last axis: (..., n) -> (..., n, n)."""
    xp, (p,) = as_arrays(p, names=["p"])
    col = p[..., :, None]                        # (..., n, 1)
    row = p[..., None, :]                        # (..., 1, n)
    eye = xp.eye(p.shape[-1], dtype=p.dtype)
    return eye * col - col * row                 # (..., n, n)
