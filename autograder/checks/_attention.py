"""Checks shared by every (output, weights) attention function (exercises 1, 2 and 4)."""
from __future__ import annotations

import numpy as np

from ..compare import close, worst_row_sum
from ..student import call, to_pair
from ._base import mismatch, normal, ok, pick_sizes


def case(rng, *, square: bool = False):
    """Q, K, V with n_q, n_k, d_k, d_v all different (n_q == n_k when square)."""
    n_q, n_k, d_k, d_v = pick_sizes(rng, 4, 2, 10)
    n_k = n_q if square else n_k
    return normal(rng, n_q, d_k), normal(rng, n_k, d_k), normal(rng, n_k, d_v)


def run(student, name, Q, K, V):
    return to_pair(call(student, name, Q, K, V), name)


def shapes(student, name, Q, K, V):
    out, w = run(student, name, Q, K, V)
    want_out, want_w = (Q.shape[0], V.shape[1]), (Q.shape[0], K.shape[0])
    if out.shape == want_out and w.shape == want_w:
        return ok()
    return mismatch(name, (Q, K, V), (out, w),
                    f"With Q {Q.shape}, K {K.shape}, V {V.shape} the output should be (n_q, d_v) = "
                    f"{want_out} and the weights (n_q, n_k) = {want_w}; got {out.shape} and {w.shape}.")


def matches(student, name, reference, Q, K, V):
    """Weights and output equal the engine's."""
    out, w = run(student, name, Q, K, V)
    want_out, want_w = reference(Q, K, V)
    if close(w, want_w) and close(out, want_out):
        return ok()
    what = "weights" if not close(w, want_w) else "output"
    return mismatch(name, (Q, K, V), (out, w), f"The {what} differ from the expected values.",
                    student_weights=w if w.ndim == 2 else [], expected_weights=want_w)


def rows_sum_to_one(student, name, Q, K, V):
    out, w = run(student, name, Q, K, V)
    if w.ndim != 2 or w.shape[0] != Q.shape[0]:
        return mismatch(name, (Q, K, V), (out, w), "The weights should have one row per query, shape "
                        f"(n_q, n_k) = ({Q.shape[0]}, {K.shape[0]}); got {w.shape}.")
    row, total = worst_row_sum(w)
    if np.all(np.isfinite(w)) and abs(total - 1) <= 1e-4 and np.all(w >= -1e-12):
        return ok()
    return mismatch(name, (Q, K, V), (out, w),
                    f"Row {row} of the weights sums to {total:.3g}; every row should be non-negative "
                    "and sum to 1.", student_weights=w)
