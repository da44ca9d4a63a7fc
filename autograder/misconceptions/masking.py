"""Wrong ways to build and apply the causal mask (exercise 2)."""
from __future__ import annotations

import numpy as np

from .attention import OVERFLOWING
from .entry import Misconception, knobbed
from .families import empty_rows_free, hidden_set, mask_values_in_weights


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
# a family is the entries of one id, each compared on what its realisations share (families.py): the mask
# multiplied into the weights or its values added to them (-inf, -1e9, -1e4); the diagonal in the hidden set
# whatever value hides it and whatever becomes of the row left with nothing to see; a 0/1 mask multiplied
# into the scores before or after the max is subtracted
_MULTIPLIED = "multiplying scores by a 0/1 mask leaves exp(0) = 1 for future positions; add 0 / -inf instead."
CAUSAL = [   # id, knobs, advice, view
    ("mask-after-softmax", {"mask": "after_zero"},
     f"the mask is applied after the softmax, so rows no longer sum to 1; {_ADD_MASK}.", None),
    ("mask-after-softmax", {"mask": "after_add"}, f"the mask is applied after the softmax; {_ADD_MASK}.",
     mask_values_in_weights),
    ("diagonal-masked", {"mask": "diagonal"}, _DIAGONAL, empty_rows_free),
    ("diagonal-masked", {"mask": "diagonal_finite"}, _DIAGONAL, empty_rows_free),
    ("future-visible", {"mask": "future"},
     "the mask hides the past and lets each position see its future; mask j > i instead.", None),
    ("multiplicative-mask", {"mask": "multiplicative"}, _MULTIPLIED, None),
    ("multiplicative-mask", {"mask": "multiplicative_shifted"}, _MULTIPLIED, None),
    ("mask-missing", {"mask": None}, f"no mask is applied, so every position sees its future; {_ADD_MASK}.", None),
    ("no-scaling", {"scale": "none"},
     "the scores are not scaled: divide Q K^T by sqrt(d_k) before masking and the softmax.", None),
    ("scale-by-dk", {"scale": "dk"}, "the scores are divided by d_k; divide by sqrt(d_k) instead.", None),
    ("softmax-wrong-axis", {"axis": 0}, "the softmax normalises each column; take it over the keys (axis=-1).", None),
    *(("softmax-global-sum", {"axis": None, **peak},
       "the softmax divides by the sum over the whole score matrix; divide each row by its own sum.", None)
      for peak in ({}, {"peak": -1})),
    *(("no-max-subtraction", {"stable": stable}, "exp() overflows on large scores; subtract each row's maximum "
       "before exponentiating (the mask's -inf is no maximum).", None) for stable in OVERFLOWING),
]

ENTRIES = [
    Misconception("diagonal-masked", "causal_mask", mask_diagonal,
                  "the diagonal is masked too; a position may attend to itself, so keep 0 on the diagonal "
                  "(np.triu(..., k=1)).", view=hidden_set),
    Misconception("future-visible", "causal_mask", mask_past,
                  "the mask hides the past and shows the future; put -inf above the diagonal (j > i).",
                  view=hidden_set),
    Misconception("multiplicative-mask", "causal_mask", mask_ones,
                  "this is a 0/1 mask meant for multiplying; the mask is added to the scores, so use 0 "
                  "where allowed and -inf where hidden."),
    Misconception("mask-missing", "causal_mask", mask_zeros,
                  "nothing is masked; put -inf above the diagonal."),
    *(knobbed(mid, "causal_attention", knobs, advice, view=view) for mid, knobs, advice, view in CAUSAL),
]
