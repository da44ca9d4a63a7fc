"""Wrong ways to build and apply the causal mask (exercise 2)."""
from __future__ import annotations

import numpy as np

from . import Misconception
from .attention import _attend, _causal, _softmax


def _scores(Q, K):
    return Q @ K.T / np.sqrt(Q.shape[-1])


def _above(n, k=1):
    return np.triu(np.ones((n, n), dtype=bool), k)


# --- causal_mask(n) -----------------------------------------------------------------------

def mask_diagonal(n):
    return np.where(_above(n, 0), -np.inf, 0.0)


def mask_past(n):
    return np.where(_above(n, 1).T, -np.inf, 0.0)


def mask_ones(n):
    return np.tril(np.ones((n, n)))


def mask_zeros(n):
    return np.zeros((n, n))


# --- causal_attention(Q, K, V) ------------------------------------------------------------

def _masked(Q, K, V, mask):
    w = _softmax(_scores(Q, K) + mask)
    return w @ V, w


def after_softmax_zeroed(Q, K, V):
    w = _softmax(_scores(Q, K)) * np.tril(np.ones((len(Q), len(K))))
    return w @ V, w


def after_softmax_added(Q, K, V):
    w = _softmax(_scores(Q, K)) + np.triu(np.full((len(Q), len(K)), -np.inf), 1)
    return w @ V, w


def diagonal_masked(Q, K, V):
    return _masked(Q, K, V, mask_diagonal(len(Q)))


def diagonal_masked_finite(Q, K, V):
    return _masked(Q, K, V, np.where(_above(len(Q), 0), -1e9, 0.0))


def future_visible(Q, K, V):
    return _masked(Q, K, V, mask_past(len(Q)))


def multiplicative(Q, K, V):
    w = _softmax(_scores(Q, K) * mask_ones(len(Q)))
    return w @ V, w


def missing(Q, K, V):
    w = _softmax(_scores(Q, K))
    return w @ V, w


def causal_no_scaling(Q, K, V):
    return _attend(Q, K, V, scale=1.0, mask=_causal(len(Q), len(K)))


def causal_scale_by_dk(Q, K, V):
    return _attend(Q, K, V, scale=1 / Q.shape[-1], mask=_causal(len(Q), len(K)))


def causal_wrong_axis(Q, K, V):
    return _attend(Q, K, V, axis=0, mask=_causal(len(Q), len(K)))


_ADD_MASK = "add the mask to the scaled scores before the softmax"
ENTRIES = [
    Misconception("diagonal-masked", "causal_mask", mask_diagonal,
                  "the diagonal is masked too; a position may attend to itself, so keep 0 on the diagonal "
                  "(np.triu(..., k=1))."),
    Misconception("future-visible", "causal_mask", mask_past,
                  "the mask hides the past and shows the future; put -inf above the diagonal (j > i)."),
    Misconception("multiplicative-mask", "causal_mask", mask_ones,
                  "this is a 0/1 mask meant for multiplying; the mask is added to the scores, so use 0 "
                  "where allowed and -inf where hidden."),
    Misconception("mask-missing", "causal_mask", mask_zeros,
                  "nothing is masked; put -inf above the diagonal."),
    Misconception("mask-after-softmax", "causal_attention", after_softmax_zeroed,
                  f"the mask is applied after the softmax, so rows no longer sum to 1; {_ADD_MASK}."),
    Misconception("mask-after-softmax", "causal_attention", after_softmax_added,
                  f"the mask is applied after the softmax; {_ADD_MASK}."),
    Misconception("diagonal-masked", "causal_attention", diagonal_masked,
                  "the diagonal is masked, so the first row has nothing to attend to; mask only j > i."),
    Misconception("diagonal-masked", "causal_attention", diagonal_masked_finite,
                  "the diagonal is masked, so the first row has nothing to attend to; mask only j > i."),
    Misconception("future-visible", "causal_attention", future_visible,
                  "the mask hides the past and lets each position see its future; mask j > i instead."),
    Misconception("multiplicative-mask", "causal_attention", multiplicative,
                  "multiplying scores by a 0/1 mask leaves exp(0) = 1 for future positions; add 0 / -inf "
                  "instead."),
    Misconception("mask-missing", "causal_attention", missing,
                  f"no mask is applied, so every position sees its future; {_ADD_MASK}."),
    Misconception("no-scaling", "causal_attention", causal_no_scaling,
                  "the scores are not scaled: divide Q K^T by sqrt(d_k) before masking and the softmax."),
    Misconception("scale-by-dk", "causal_attention", causal_scale_by_dk,
                  "the scores are divided by d_k; divide by sqrt(d_k) instead."),
    Misconception("softmax-wrong-axis", "causal_attention", causal_wrong_axis,
                  "the softmax normalises each column; take it over the keys (axis=-1)."),
]
