"""ex2_causal: causal_attention(Q, K, V) adds the causal mask to the scores before the softmax."""
from __future__ import annotations

import numpy as np

import solutions as S

from ..student import as_returned
from ...tolerance import close, same_values
from . import _attention as A
from ._base import fail, mismatch, normal, ok, pick_sizes

NAME = "causal_attention"


def _case(rng):
    n, d_k, d_v = pick_sizes(rng, 3, 3, 10)
    return normal(rng, n, d_k), normal(rng, n, d_k), normal(rng, n, d_v)


def matches_engine(student, rng):
    return A.matches(student, NAME, S.causal_attention, *_case(rng), rng, square=True)


def no_future_leakage(student, rng):
    """Changing keys and values after position i leaves the outputs up to i unchanged. A function whose
    results change between identical calls cannot be judged here (the value check charges the state), and
    one whose output does not depend on its inputs earns nothing."""
    Q, K, V = _case(rng)
    out, w = A.run(student, NAME, Q, K, V)
    i = int(rng.integers(0, len(Q) - 1))              # perturb every row after i
    nothing = _nothing(student, (Q, K, V), (out, w), rng, "no future leakage", part=0)
    if nothing:
        return nothing
    K2, V2 = K.copy(), V.copy()
    K2[i + 1:] += normal(rng, len(K) - i - 1, K.shape[1], scale=3.0)
    V2[i + 1:] += normal(rng, len(V) - i - 1, V.shape[1], scale=3.0)
    out2, _ = A.run(student, NAME, Q, K2, V2)
    # NaN in the same places in both runs is no leak: a NaN row is the NaN and row-sum checks' to charge
    if out.shape == out2.shape and out.ndim == 2 and same_values(out[: i + 1], out2[: i + 1]):
        return ok()
    again, _ = A.run(student, NAME, Q, K, V)
    if not same_values(again, out):
        return ok("ok (not judged: the results change between identical calls, which the value check charges)")
    return mismatch(student, NAME, (Q, K, V), (out, w),
                    f"Changing keys and values after position {i} changed the output at position {i} "
                    "or before: a position must not see its future. Add the mask to the scores before "
                    "the softmax.", student_weights=w if w.ndim == 2 else [],
                    expected_weights=S.causal_attention(Q, K, V)[1])


def _nothing(student, case, pair, rng, judged, part=1):
    return A.computes_nothing(student, NAME, S.causal_attention, case, pair, rng, judged, part=part, square=True)


def rows_sum_to_one(student, rng):
    return A.rows_sum_to_one(student, NAME, S.causal_attention, *_case(rng), rng, square=True)


def first_row(student, rng):
    """The first position puts all of its weight on itself. The row is judged up to its own sum (the
    row-sum check charges normalisation) and a NaN row is the NaN check's to charge."""
    Q, K, V = _case(rng)
    out, w = A.run(student, NAME, Q, K, V)
    nothing = _nothing(student, (Q, K, V), (out, w), rng, "the first row")
    if nothing:
        return nothing
    if w.ndim == 2 and w.shape[1] == len(K) and len(w):
        row = w[0]
        if np.isnan(row).any() or (row.sum() != 0 and close(row / row.sum(), np.eye(1, len(K))[0])):
            return ok()
    first = np.round(w[0], 3).tolist() if w.ndim == 2 else w.tolist()
    return mismatch(student, NAME, (Q, K, V), (out, w), f"The first row of the weights is {first}; the first "
                    "position can only see itself, so it should be [1, 0, ..., 0].",
                    student_weights=w if w.ndim == 2 else [])


def no_nan_single_token(student, rng):
    """A single position attends to itself with weight 1; no row is ever NaN."""
    for n in (1, 4):
        Q, K, V = normal(rng, n, 3), normal(rng, n, 3), normal(rng, n, 2)
        out, w = A.run(student, NAME, Q, K, V)
        if np.isnan(out).any() or np.isnan(w).any():
            where = "a single position" if n == 1 else f"{n} positions"
            return mismatch(student, NAME, (Q, K, V), (out, w), f"With {where} the result contains NaN: a row whose "
                            "scores are all -inf has no softmax (is the diagonal masked?).")
        if n == 1 and not (close(w, np.ones((1, 1))) and close(out, V)):
            return fail(f"With a single position the weights should be [[1]] and the output equal to V; "
                        f"got weights {as_returned(w)} and output {as_returned(out)}.")
    return _nothing(student, (Q, K, V), (out, w), rng, "no NaN") or ok()
