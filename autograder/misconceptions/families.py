"""What a family of realisations leaves fixed: the part of a value that its entries are compared on.

A misconception is identified by what it breaks, not by one way of writing it. Where the realisations
differ only in what the mistake does not decide, an entry carries a view that keeps what they share,
applied to the student's value and the variant's alike before they are compared (``proof.py``):

- the diagonal in the hidden set (``EMPTY_ROWS_FREE``): a row with no visible key left (the first) is
  NaN with -inf, uniform with -1e9 written over the scores or -inf then ``nan_to_num``, the unmasked
  softmax with -1e9 added, zeros with the NaN replaced afterwards; every other row is the same in all of
  them, and only those rows are compared;
- mask values in the returned weights (``MASK_VALUES_IN_WEIGHTS``): -inf, -1e9 or -1e4 added after the
  softmax are all "hidden" values in the weights (at most ``HIDDEN``), and the output made from such
  weights is not compared;
- a mask's hidden set (``HIDDEN_SET``): -inf, -1e9 or ``np.finfo(float).min`` all hide a position.

A view never turns a value that is not of the expected layout into one that is: anything else comes back
as it was, and the comparison then fails as before.
"""
from __future__ import annotations

import numpy as np

HIDDEN = -1e3             # a value at most this, added to a weight in [0, 1], is a mask's hidden value
MASK_HIDDEN = -1e9        # as the mask check: -inf, or a large finite negative such as -1e9


def _pair(value):
    if not (isinstance(value, tuple) and len(value) == 2):
        return None
    try:
        out, w = (np.array(v, dtype=float) for v in value)
    except Exception:  # noqa: BLE001 - whatever the student returned that is not numeric
        return None
    return (out, w) if out.ndim == 2 and w.ndim == 2 else None


def empty_rows_free(args, value):
    """(output, weights) with the rows that hide every key (j >= i hides all of row 0) set to NaN."""
    pair = _pair(value)
    if pair is None:
        return value
    out, w = pair
    n_q, n_k = len(args[0]), len(args[1])
    if w.shape != (n_q, n_k) or len(out) != n_q:
        return value
    empty = np.triu(np.ones((n_q, n_k), dtype=bool)).all(axis=1)
    out[empty], w[empty] = np.nan, np.nan
    return out, w


def mask_values_in_weights(args, value):
    """(NaN output, weights with every value at most ``HIDDEN`` read as -inf)."""
    pair = _pair(value)
    if pair is None:
        return value
    out, w = pair
    with np.errstate(invalid="ignore"):
        return np.full(out.shape, np.nan), np.where(w <= HIDDEN, -np.inf, w)


def hidden_set(args, value):
    """A float mask with every value at most ``MASK_HIDDEN`` read as -inf (truth values stay as they are)."""
    m = np.asarray(value)
    if m.dtype == bool or m.dtype.kind not in "fiu":
        return value
    with np.errstate(invalid="ignore"):
        return np.where(m <= MASK_HIDDEN, -np.inf, m.astype(float))


def composed(views):
    """One view that applies each of ``views`` in turn (a compound's parts)."""
    views = [v for v in views if v is not None]
    if not views:
        return None
    if len(views) == 1:
        return views[0]

    def view(args, value):
        for one in views:
            value = one(args, value)
        return value
    return view
