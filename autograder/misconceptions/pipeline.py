"""The exercises as pipelines of stages with knobs, so that a mistake is one knob set wrong.

Attention runs: scores -> scale -> mask -> softmax (axis, max subtraction) -> output, and
returns the pair; softmax alone has the axis and the max subtraction; the memory counts multiply
factors. A catalogue entry names the knobs
it turns; two entries that turn different knobs compose into a compound mistake.
"""
from __future__ import annotations

import numpy as np

SCALES = {
    "sqrt_dk": lambda Q, V: 1 / np.sqrt(Q.shape[-1]),
    "none": lambda Q, V: 1.0,
    "dk": lambda Q, V: 1 / Q.shape[-1],
    "dv": lambda Q, V: 1 / np.sqrt(V.shape[-1]),
}


SHIFTS = {"mean": np.mean, "min": np.min}


def softmax(s, axis=-1, stable=True, peak="same", keep=None):
    """exp(s - a maximum) / its sum along ``axis`` (None: the whole array). ``stable``: True (a maximum
    subtracted), False (none), "lse" (exp(s - log(sum(exp(s)))), a log-sum-exp without the max), "mean" or
    "min" (another shift, which overflows as none does); ``peak``:
    which maximum, "same" (along ``axis``) or another axis; ``keep``: a 0/1 mask multiplied into the shifted
    scores."""
    if stable == "lse":
        return np.exp(s - np.log(np.exp(s).sum(axis=axis, keepdims=True)))
    if stable in SHIFTS:                              # a shift that is not the maximum: exp() still overflows
        shifted = s - SHIFTS[stable](s, axis=axis, keepdims=True)
    else:
        shifted = s - s.max(axis=axis if peak == "same" else peak, keepdims=True) if stable else s
    e = np.exp(shifted if keep is None else shifted * keep)
    return e / e.sum(axis=axis, keepdims=True)


def softmax_of(x, axis=-1, *, over="given", stable=True, peak="same"):
    """The exercise's softmax(x, axis) with its knobs: over the axis given, the "last" axis or another fixed
    axis whatever is given, or None (the whole array); with or without a maximum subtracted, and which one
    ("same", "given" or "last")."""
    x = np.asarray(x, dtype=float)
    axes = {"given": axis, "last": -1, None: None}
    return softmax(x, axes.get(over, over), stable, axes.get(peak, peak))


def _hidden(kind: str, n_q: int, n_k: int) -> np.ndarray:
    """Where an additive mask puts its large negative value."""
    ones = np.ones((n_q, n_k), dtype=bool)
    return {"causal": np.triu(ones, 1), "diagonal": np.triu(ones, 0), "future": np.tril(ones, -1)}[kind]


def _scores(Q, K, V, scale, mask):
    s = Q @ K.T * SCALES[scale](Q, V)                                    # (n_q, n_k)
    n_q, n_k = s.shape
    if mask in ("causal", "diagonal", "future"):
        s = s + np.where(_hidden(mask, n_q, n_k), -np.inf, 0.0)
    elif mask == "diagonal_finite":
        s = s + np.where(_hidden("diagonal", n_q, n_k), -1e9, 0.0)
    elif mask == "multiplicative":
        s = s * np.tril(np.ones((n_q, n_k)))
    return s


def attend(Q, K, V, *, scale="sqrt_dk", mask=None, axis=-1, stable=True, peak="same", ret="pair"):
    """One (output, weights) attention with its knobs; the defaults are the right answer."""
    keep = np.tril(np.ones((len(Q), len(K)))) if mask == "multiplicative_shifted" else None
    w = softmax(_scores(Q, K, V, scale, mask), axis, stable, peak, keep)   # (n_q, n_k)
    if mask == "after_zero":
        w = w * np.tril(np.ones(w.shape))
    elif mask == "after_add":
        w = w + np.where(_hidden("causal", *w.shape), -np.inf, 0.0)
    out = w @ V                                                           # (n_q, d_v)
    return {"pair": (out, w), "transposed": (out, w.T), "swapped": (w, out)}[ret]


_DTYPE = {"right": lambda b: b, "fixed": lambda b: 2, "dropped": lambda b: 1}
_UNIT = {"bytes": lambda x: x, "gb": lambda x: x / 1e9, "bits": lambda x: x * 8}


def attention_bytes(n, dtype_bytes=2, *, power=2, dtype="right", unit="bytes"):
    return _UNIT[unit](n ** power * _DTYPE[dtype](dtype_bytes))


def ffn_bytes(n, d_model, dtype_bytes=2, expansion=4, *, widen=True, dtype="right", unit="bytes"):
    return _UNIT[unit](n * (expansion if widen else 1) * d_model * _DTYPE[dtype](dtype_bytes))


def crossover(d_model, dtype_bytes=2, expansion=4, *, widen=True, shift=0):
    """shift: 0 (right), +1 or -1 (off by one), "zero" (a loop from n = 0 stops at once: 0 >= 0)."""
    return 0 if shift == "zero" else (expansion if widen else 1) * d_model + shift


BUILDERS = {
    "softmax": (softmax_of, {}),
    "scaled_dot_product_attention": (attend, {}),
    "cross_attention": (attend, {}),
    "causal_attention": (attend, {"mask": "causal"}),
    "attention_memory_bytes": (attention_bytes, {}),
    "ffn_memory_bytes": (ffn_bytes, {}),
    "crossover_length": (crossover, {}),
}


def variant(function: str, knobs: dict):
    """The function with these knobs turned (on top of the function's own defaults)."""
    fn, base = BUILDERS[function]
    settings = {**base, **knobs}
    return lambda *args: fn(*args, **settings)
