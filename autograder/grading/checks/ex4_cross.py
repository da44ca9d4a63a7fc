"""ex4_cross: cross_attention(Q, K, V), decoder queries attending to encoder keys and values."""
from __future__ import annotations

import numpy as np

import solutions as S

from . import _attention as A
from ._base import mismatch, ok

NAME = "cross_attention"


def shapes(student, rng):
    return A.shapes(student, NAME, *A.case(rng), rng)


def matches_engine(student, rng):
    return A.matches(student, NAME, S.cross_attention, *A.case(rng), rng)


def rows_sum_to_one(student, rng):
    return A.rows_sum_to_one(student, NAME, S.cross_attention, *A.case(rng), rng)


def no_causal_mask(student, rng):
    Q, K, V = A.case(rng, square=True)
    out, w = A.run(student, NAME, Q, K, V)
    nothing = A.computes_nothing(student, NAME, S.cross_attention, (Q, K, V), (out, w), rng, "no causal mask",
                                 square=True)      # the check's own input class: square inputs
    if nothing:
        return nothing
    future = np.triu(np.ones(w.shape, dtype=bool), 1) if w.ndim == 2 else np.zeros(1, bool)
    if w.ndim == 2 and np.nansum(np.abs(w[future])) > 1e-6:
        return ok()
    return mismatch(student, NAME, (Q, K, V), (out, w),
                    "No decoder position puts weight on a later encoder position; cross-attention has "
                    "no causal mask.", student_weights=w if w.ndim == 2 else [])
