"""Wrong ways to build and apply the causal mask (exercise 2)."""
from __future__ import annotations

import numpy as np

from .entry import Misconception, knobbed


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

_ADD_MASK = "add the mask to the scaled scores before the softmax"
_DIAGONAL = "the diagonal is masked, so the first row has nothing to attend to; mask only j > i."
CAUSAL = [   # id, knobs, advice; mask-after-softmax and diagonal-masked have two forms each
    ("mask-after-softmax", {"mask": "after_zero"},
     f"the mask is applied after the softmax, so rows no longer sum to 1; {_ADD_MASK}."),
    ("mask-after-softmax", {"mask": "after_add"}, f"the mask is applied after the softmax; {_ADD_MASK}."),
    ("diagonal-masked", {"mask": "diagonal"}, _DIAGONAL),
    ("diagonal-masked", {"mask": "diagonal_finite"}, _DIAGONAL),
    ("future-visible", {"mask": "future"},
     "the mask hides the past and lets each position see its future; mask j > i instead."),
    ("multiplicative-mask", {"mask": "multiplicative"},
     "multiplying scores by a 0/1 mask leaves exp(0) = 1 for future positions; add 0 / -inf instead."),
    ("mask-missing", {"mask": None}, f"no mask is applied, so every position sees its future; {_ADD_MASK}."),
    ("no-scaling", {"scale": "none"},
     "the scores are not scaled: divide Q K^T by sqrt(d_k) before masking and the softmax."),
    ("scale-by-dk", {"scale": "dk"}, "the scores are divided by d_k; divide by sqrt(d_k) instead."),
    ("softmax-wrong-axis", {"axis": 0}, "the softmax normalises each column; take it over the keys (axis=-1)."),
    ("softmax-global-sum", {"axis": None},
     "the softmax divides by the sum over the whole score matrix; divide each row by its own sum."),
]

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
    *(knobbed(mid, "causal_attention", knobs, advice) for mid, knobs, advice in CAUSAL),
]
