"""ex4_cross: cross_attention(Q, K, V), decoder queries attending to encoder keys and values."""
from __future__ import annotations

import numpy as np

from . import _attention as A
from . import _properties as P
from ._base import Check, mismatch, ok

NAME = "cross_attention"

shapes = A.shapes_check(NAME)
matches_engine = A.matches_check("matches_engine", NAME)
rows_sum_to_one = P.rows_check(NAME)


def _no_mask_plan(rng):
    return P.evidence_plan(NAME, A.case(rng, square=True), rng, "no causal mask", square=True)


def _no_mask(plan, got):
    """Some decoder position puts weight on a later encoder position: no causal mask. Judged on square inputs,
    the check's own input class (its "does it compute" questions too)."""
    Q, K, V = plan.first
    out, w = A.pair_of(NAME, got[0], plan.first)
    nothing = P.computes_nothing(NAME, plan, got, (out, w))
    if nothing:
        return nothing
    future = np.triu(np.ones(w.shape, dtype=bool), 1) if w.ndim == 2 else np.zeros(1, bool)
    if w.ndim == 2 and np.nansum(np.abs(w[future])) > 1e-6:
        return ok()
    return mismatch(NAME, (Q, K, V), (out, w), "No decoder position puts weight on a later encoder position; "
                    "cross-attention has no causal mask.", student_weights=w if w.ndim == 2 else [])


no_causal_mask = Check("no_causal_mask", _no_mask_plan, _no_mask)
