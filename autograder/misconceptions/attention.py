"""Wrong ways to write softmax, attention and cross-attention (exercises 1 and 4)."""
from __future__ import annotations

from .entry import Misconception, knobbed


# --- attention(Q, K, V) -> (output, weights) ----------------------------------------------

# a family is the entries of one id: the softmax's normaliser spans more than one row whichever maximum was
# subtracted first (the whole matrix's, each row's, each column's); exp() of scores not shifted by their
# maximum overflows: unshifted and divided by the sum, a log-sum-exp without the max, the mean or the minimum
# subtracted instead
OVERFLOWING = (False, "lse", "mean", "min")
_GLOBAL = ("the softmax divides by the sum over the whole score matrix; divide each row by its own sum "
           "(axis=-1, keepdims=True).")
_OVERFLOWS = "exp() overflows on large scores; subtract each row's maximum before exponentiating."
ATTENTION = [   # id, knobs, advice
    ("no-scaling", {"scale": "none"},
     "the scores are not scaled: divide Q K^T by sqrt(d_k) before the softmax."),
    ("scale-by-dk", {"scale": "dk"},
     "the scores are divided by d_k; divide by sqrt(d_k) instead (np.sqrt(Q.shape[-1]))."),
    ("scale-by-dv", {"scale": "dv"},
     "the scores are scaled with the width of V; use d_k, the width of Q and K."),
    ("softmax-wrong-axis", {"axis": 0},
     "the softmax normalises each column; take it over the keys (axis=-1) so each row sums to 1."),
    *(("softmax-global-sum", {"axis": None, **peak}, _GLOBAL) for peak in ({}, {"peak": -1}, {"peak": 0})),
    *(("no-max-subtraction", {"stable": stable}, _OVERFLOWS) for stable in OVERFLOWING),
    ("weights-transposed", {"ret": "transposed"},
     "the weights come back transposed; return them with shape (n_q, n_k), one row per query."),
    ("outputs-swapped", {"ret": "swapped"},
     "output and weights are swapped; return (weights @ V, weights) in that order."),
]


def _attention_entries(function: str) -> list[Misconception]:
    return [knobbed(mid, function, knobs, advice) for mid, knobs, advice in ATTENTION]


# softmax(x, axis): a fixed axis (the last, the first, axis=1) in place of the argument; one sum over the whole
# array whichever maximum was subtracted; no maximum subtracted, divided by the sum or as a log-sum-exp
SOFTMAX = [
    *(("softmax-wrong-axis", {"over": over}, "the `axis` argument is ignored; normalise along the axis you are given.")
      for over in ("last", 0, 1)),
    *(("softmax-global-sum", {"over": None, **peak}, "the exponentials are divided by the sum over the whole array; "
       "sum along `axis` only (keepdims=True).") for peak in ({}, {"peak": "given"}, {"peak": "last"}, {"peak": 0})),
    *(("no-max-subtraction", {"stable": stable}, "exp() overflows for inputs near 1e4; subtract the maximum along "
       "`axis` first.") for stable in OVERFLOWING),
]

ENTRIES = [
    *(knobbed(mid, "softmax", knobs, advice) for mid, knobs, advice in SOFTMAX),
    *_attention_entries("scaled_dot_product_attention"),
    knobbed("cross-causal-mask", "cross_attention", {"mask": "causal"},
            "a causal mask is applied; cross-attention lets every decoder position see every "
            "encoder position, so drop the mask."),
    *_attention_entries("cross_attention"),
]
