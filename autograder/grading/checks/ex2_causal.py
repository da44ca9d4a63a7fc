"""ex2_causal: causal_attention(Q, K, V) adds the causal mask to the scores before the softmax."""
from __future__ import annotations

import numpy as np

import solutions as S

from ..asking import Question
from ..student import as_returned
from ...tolerance import close, same_values
from . import _attention as A
from . import _properties as P
from ._base import Check, fail, mismatch, normal, ok, pick_sizes

NAME = "causal_attention"


def _case(rng):
    n, d_k, d_v = pick_sizes(rng, 3, 3, 10)
    return normal(rng, n, d_k), normal(rng, n, d_k), normal(rng, n, d_v)


matches_engine = A.matches_check("matches_engine", NAME, _case, square=True)
rows_sum_to_one = P.rows_check(NAME, _case, square=True)


def _leak_plan(rng):
    """The check's inputs, the same with the keys and values after position i changed, and the first again."""
    Q, K, V = _case(rng)
    i = int(rng.integers(0, len(Q) - 1))              # perturb every row after i
    K2, V2 = K.copy(), V.copy()
    K2[i + 1:] += normal(rng, len(K) - i - 1, K.shape[1], scale=3.0)
    V2[i + 1:] += normal(rng, len(V) - i - 1, V.shape[1], scale=3.0)
    before = [Question(NAME, (Q, K, V)), Question(NAME, (Q, K2, V2)), Question(NAME, (Q, K, V))]
    plan = P.evidence_plan(NAME, (Q, K, V), rng, "no future leakage", square=True, before=before)
    plan.i, plan.changed = i, (Q, K2, V2)
    return plan


def _leak(plan, got):
    """Changing keys and values after position i leaves the outputs up to i unchanged. A function whose results
    change between identical calls cannot be judged here (the value check charges the state), and one whose
    output does not depend on its inputs earns nothing."""
    Q, K, V = plan.first
    i = plan.i
    out, w = A.pair_of(NAME, got[0], plan.first)
    nothing = P.computes_nothing(NAME, plan, got, (out, w), part=0)
    if nothing:
        return nothing
    out2, _ = A.pair_of(NAME, got[1], plan.changed)
    # NaN in the same places in both runs is no leak: a NaN row is the NaN and row-sum checks' to charge
    if out.shape == out2.shape and out.ndim == 2 and same_values(out[: i + 1], out2[: i + 1]):
        return ok()
    again, _ = A.pair_of(NAME, got[2], plan.first)
    if not same_values(again, out):
        return ok("ok (not judged: the results change between identical calls, which the value check charges)")
    return mismatch(NAME, (Q, K, V), (out, w),
                    f"Changing keys and values after position {i} changed the output at position {i} "
                    "or before: a position must not see its future. Add the mask to the scores before "
                    "the softmax.", student_weights=w if w.ndim == 2 else [],
                    expected_weights=S.causal_attention(Q, K, V)[1])


def _first_row(plan, got):
    """The first position puts all of its weight on itself. The row is judged up to its own sum (the
    row-sum check charges normalisation) and a NaN row is the NaN check's to charge."""
    Q, K, V = plan.first
    out, w = A.pair_of(NAME, got[0], plan.first)
    nothing = P.computes_nothing(NAME, plan, got, (out, w))
    if nothing:
        return nothing
    if w.ndim == 2 and w.shape[1] == len(K) and len(w):
        row = w[0]
        if np.isnan(row).any() or (row.sum() != 0 and close(row / row.sum(), np.eye(1, len(K))[0])):
            return ok()
    first = np.round(w[0], 3).tolist() if w.ndim == 2 else w.tolist()
    return mismatch(NAME, (Q, K, V), (out, w), f"The first row of the weights is {first}; the first "
                    "position can only see itself, so it should be [1, 0, ..., 0].",
                    student_weights=w if w.ndim == 2 else [])


def _single_plan(rng):
    cases = [(normal(rng, n, 3), normal(rng, n, 3), normal(rng, n, 2)) for n in (1, 4)]
    before = [Question(NAME, cases[0], draws="size-one"), Question(NAME, cases[1])]
    plan = P.evidence_plan(NAME, cases[1], rng, "no NaN", square=True, before=before)
    plan.cases = cases
    return plan


def _single(plan, got):
    """A single position attends to itself with weight 1; no row is ever NaN."""
    for case, reply in zip(plan.cases, got):
        Q, K, V = case
        out, w = A.pair_of(NAME, reply, case)
        n = len(Q)
        if np.isnan(out).any() or np.isnan(w).any():
            where = "a single position" if n == 1 else f"{n} positions"
            return mismatch(NAME, case, (out, w), f"With {where} the result contains NaN: a row whose "
                            "scores are all -inf has no softmax (is the diagonal masked?).")
        if n == 1 and not (close(w, np.ones((1, 1))) and close(out, V)):
            return fail(f"With a single position the weights should be [[1]] and the output equal to V; "
                        f"got weights {as_returned(w)} and output {as_returned(out)}.")
    return P.computes_nothing(NAME, plan, got, (out, w)) or ok()


no_future_leakage = Check("no_future_leakage", _leak_plan, _leak)
first_row = Check("first_row", lambda rng: P.evidence_plan(NAME, _case(rng), rng, "the first row", square=True),
                  _first_row)
no_nan_single_token = Check("no_nan_single_token", _single_plan, _single)
