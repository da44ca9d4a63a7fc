"""The property checks every attention function shares: rows that sum to 1, and stability on large scores.

A property point is earned only by a function shown to compute its answer from its inputs (``_evidence.py``):
each property check declares, with its own case, the evidence questions it may need.
"""
from __future__ import annotations

import numpy as np

from ..asking import Question
from ...tolerance import tolerance
from ._attention import REFERENCE, case, evidence_unproven, nothing_computed, pair_of, right
from ._base import Check, Plan, mismatch, nan_first, ok
from ._evidence import attention_evidence

LARGE = 300.0            # Q and K this many times larger: scores about 10**5 times larger


def evidence_plan(name: str, first: tuple, rng, judged: str, *, square: bool = False, before=()) -> Plan:
    """The check's own questions (``before``, on ``first`` by default), then the evidence questions."""
    evidence = attention_evidence(name, rng, square=square, judged=judged)
    asked = list(before) or [Question(name, first)]
    return Plan(asked + list(evidence.questions), first=first, evidence=evidence, judged=judged)


def computes_nothing(name, plan, got, pair, *, part: int = 1):
    """None when the function is shown to compute its answer (``part``: 0 output, 1 weights) from its inputs
    (``_evidence.py``); else the failure that says it is not, before any property is judged on it."""
    if np.size(pair[part]) and np.isnan(pair[part]).all():       # NaN everywhere equals itself for any input
        return nan_first(name, plan.first, pair, {"weights": pair[1], "output": pair[0]})
    said = evidence_unproven(name, plan.evidence, got, part)
    if said is None:
        return None
    weights = said if part == 1 else evidence_unproven(name, plan.evidence, got, 1)
    if weights:                                  # the weights are not computed: the root, whatever part is judged
        return nothing_computed(name, weights, plan.judged, pair, 1)
    return nothing_computed(name, said, plan.judged, pair, part)


# --- rows that sum to 1 ----------------------------------------------------------------------------

def rows_check(name: str, draw=case, *, square: bool = False) -> Check:
    """Each query's weights over the keys are non-negative and sum to 1 (a transposed layout is the shapes check's
    to charge, so the keys' axis is found by its length; the message then speaks of the columns the student
    returned, not of a transposed copy); weights that do not depend on the inputs earn nothing."""
    return Check("rows_sum_to_one", lambda rng: evidence_plan(name, draw(rng), rng, "rows that sum to 1", square=square),
                 lambda plan, got: _rows(name, plan, got))


def _rows(name, plan, got):
    Q, K, V = plan.first
    out, w = pair_of(name, got[0], plan.first)
    nothing = computes_nothing(name, plan, got, (out, w))
    if nothing:
        return nothing
    found = _query_rows(w, len(Q), len(K), "the weights")
    found = _query_rows(out, len(Q), len(K), "the first array returned") if found is None else found  # swapped
    if found is None:
        return mismatch(name, (Q, K, V), (out, w), "The weights should have one row per query and one column per "
                        f"key, shape (n_q, n_k) = ({Q.shape[0]}, {K.shape[0]}); got {w.shape}.")
    problem = row_problem(*found)
    if problem is None:
        return ok()
    return mismatch(name, (Q, K, V), (out, w), problem, locate=False, student_weights=w)


def _query_rows(w, n_q, n_k, what):
    """(one row per query, what they are called, whether the student returned them transposed)."""
    if w.shape == (n_q, n_k):
        return w, what, False
    return (w.T, what, True) if w.ndim == 2 and w.shape == (n_k, n_q) else None


def row_problem(w, what: str = "the weights", transposed: bool = False) -> str | None:
    """What is wrong with each query's weights (the rows of ``w``), or None; NaN is called NaN. With
    ``transposed``, the student returned ``w.T``: the message names its columns and indices."""
    line = "Column" if transposed else "Row"
    per = f" ({what} come back one column per query)" if transposed else ""
    nan = np.flatnonzero(np.isnan(w).any(axis=-1))
    if nan.size:
        return (f"{line} {nan[0]} of {what} is NaN{per}; each query's weights should be non-negative and "
                "sum to 1 (a row whose scores are all -inf has no softmax).")
    if not np.all(np.isfinite(w)):
        return f"{what.capitalize()} contain inf; each query's weights should be non-negative and sum to 1."
    if np.any(w < -1e-12):
        i, j = (int(v) for v in np.argwhere(w < -1e-12)[0])
        at = f"[{j}, {i}]" if transposed else f"[{i}, {j}]"
        return f"Weight {at} is {w[i, j]:.3g}; weights are never negative, and each query's weights sum to 1."
    sums = w.sum(axis=-1)
    i = int(np.argmax(np.abs(sums - 1)))
    if abs(sums[i] - 1) <= tolerance(w)[0]:
        return None
    if transposed:
        return f"Column {i} of {what} sums to {sums[i]:.3g}{per}; each query's weights should sum to 1."
    return f"Row {i} of {what} sums to {sums[i]:.3g}; every row should sum to 1."


# --- stability ---------------------------------------------------------------------------------------

def stable_check(name: str, draw=case, *, square: bool = False) -> Check:
    """Scores about ``LARGE**2`` times larger still give the right, finite answer. A mistake that already shows
    on ordinary inputs is the value check's to charge; here only overflow and large-input errors count, and
    weights that do not depend on the inputs earn nothing."""
    def plan(rng):
        Q, K, V = draw(rng)
        large = (Q * LARGE, K * LARGE, V)
        before = [Question(name, large, draws="large"), Question(name, (Q, K, V))]
        return evidence_plan(name, (Q, K, V), rng, "stability", square=square, before=before)
    return Check("stable_for_large_scores", plan, lambda plan, got: _stable(name, plan, got))


def _stable(name, plan, got):
    Q, K, V = plan.first
    large = (Q * LARGE, K * LARGE, V)
    reference = REFERENCE[name]
    with np.errstate(all="ignore"):
        out, w = pair_of(name, got[0], large, "with scores in the thousands")
    finite = bool(np.all(np.isfinite(out)) and np.all(np.isfinite(w)))
    if finite and right(reference, (out, w), *large):
        return computes_nothing(name, plan, got, (out, w)) or ok()
    ordinary = pair_of(name, got[1], plan.first)
    if not finite and any(np.isnan(a).any() for a in ordinary):              # NaN on ordinary inputs too
        return computes_nothing(name, plan, got, ordinary) \
            or ok("ok (NaN on ordinary inputs too: the value and row checks charge it)")
    if finite and not right(reference, ordinary, Q, K, V):
        return computes_nothing(name, plan, got, ordinary) or ok("ok (the values are charged by the value check)")
    what = "gives NaN or inf" if not finite else "gives wrong values"
    though = ", although it is right on ordinary inputs" if right(reference, ordinary, Q, K, V) else ""
    return mismatch(name, large, (out, w), f"With scores in the thousands the function {what}{though}.")
