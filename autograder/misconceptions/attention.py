"""Wrong ways to write softmax, attention and cross-attention (exercises 1 and 4)."""
from __future__ import annotations

import numpy as np

from . import Misconception


def _softmax(s, axis=-1):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _attend(Q, K, V, *, scale=None, axis=-1, mask=None):
    s = Q @ K.T * (1 / np.sqrt(Q.shape[-1]) if scale is None else scale)
    if mask is not None:
        s = s + mask
    w = _softmax(s, axis)
    return w @ V, w


def _causal(n_q, n_k):
    return np.triu(np.full((n_q, n_k), -np.inf), 1)


# --- softmax(x, axis) ---------------------------------------------------------------------

def softmax_ignores_axis(x, axis=-1):
    return _softmax(x, -1)


def softmax_no_max(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def softmax_global(x, axis=-1):
    e = np.exp(x - x.max())
    return e / e.sum()


# --- attention(Q, K, V) -> (output, weights) ----------------------------------------------

def no_scaling(Q, K, V):
    return _attend(Q, K, V, scale=1.0)


def scale_by_dk(Q, K, V):
    return _attend(Q, K, V, scale=1 / Q.shape[-1])


def scale_by_dv(Q, K, V):
    return _attend(Q, K, V, scale=1 / np.sqrt(V.shape[-1]))


def wrong_axis(Q, K, V):
    s = Q @ K.T / np.sqrt(Q.shape[-1])
    w = _softmax(s, axis=0)
    return w @ V, w


def no_max_subtraction(Q, K, V):
    s = Q @ K.T / np.sqrt(Q.shape[-1])
    w = np.exp(s) / np.exp(s).sum(axis=-1, keepdims=True)
    return w @ V, w


def weights_transposed(Q, K, V):
    out, w = _attend(Q, K, V)
    return out, w.T


def outputs_swapped(Q, K, V):
    out, w = _attend(Q, K, V)
    return w, out


def cross_causal(Q, K, V):
    return _attend(Q, K, V, mask=_causal(Q.shape[0], K.shape[0]))


def _attention_entries(function: str) -> list[Misconception]:
    return [
        Misconception("no-scaling", function, no_scaling,
                      "the scores are not scaled: divide Q K^T by sqrt(d_k) before the softmax."),
        Misconception("scale-by-dk", function, scale_by_dk,
                      "the scores are divided by d_k; divide by sqrt(d_k) instead (np.sqrt(Q.shape[-1]))."),
        Misconception("scale-by-dv", function, scale_by_dv,
                      "the scores are scaled with the width of V; use d_k, the width of Q and K."),
        Misconception("softmax-wrong-axis", function, wrong_axis,
                      "the softmax normalises each column; take it over the keys (axis=-1) so each row sums to 1."),
        Misconception("no-max-subtraction", function, no_max_subtraction,
                      "exp() overflows on large scores; subtract each row's maximum before exponentiating."),
        Misconception("weights-transposed", function, weights_transposed,
                      "the weights come back transposed; return them with shape (n_q, n_k), one row per query."),
        Misconception("outputs-swapped", function, outputs_swapped,
                      "output and weights are swapped; return (weights @ V, weights) in that order."),
    ]


ENTRIES = [
    Misconception("softmax-wrong-axis", "softmax", softmax_ignores_axis,
                  "the `axis` argument is ignored; normalise along the axis you are given."),
    Misconception("softmax-global-sum", "softmax", softmax_global,
                  "the exponentials are divided by the sum over the whole array; sum along `axis` only "
                  "(keepdims=True)."),
    Misconception("no-max-subtraction", "softmax", softmax_no_max,
                  "exp() overflows for inputs near 1e4; subtract the maximum along `axis` first."),
    *_attention_entries("scaled_dot_product_attention"),
    Misconception("cross-causal-mask", "cross_attention", cross_causal,
                  "a causal mask is applied; cross-attention lets every decoder position see every "
                  "encoder position, so drop the mask."),
    *_attention_entries("cross_attention"),
]
