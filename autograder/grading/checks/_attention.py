"""Checks shared by every (output, weights) attention function (exercises 1, 2 and 4).

Each check charges its own property once: the shapes, the values, the rows'
normalisation, stability on large scores. A mistake that one check owns does not
fail the others (transposed weights cost the shapes and values, not the row sums).
The value check also owns state (``_state.py``): it calls the function with its inputs,
with other values of the same shapes and with its inputs again. The property checks
earn nothing from a function that computes nothing from its inputs.
"""
from __future__ import annotations

import numpy as np

from ..student import StudentError, call, to_pair
from ...tolerance import close, tolerance
from ...misconceptions import diagnose_square
from ._base import Probe, fail, mismatch, nan_first, normal, ok, pick_sizes
from ._state import attends, mutation_problem, nothing_computed, repeat, state_problem


def case(rng, *, square: bool = False):
    """Q, K, V with n_q, n_k, d_k, d_v all different (n_q == n_k when square)."""
    n_q, n_k, d_k, d_v = pick_sizes(rng, 4, 2, 10)
    n_k = n_q if square else n_k
    return normal(rng, n_q, d_k), normal(rng, n_k, d_k), normal(rng, n_k, d_v)


def expected_shapes(Q, K, V) -> str:
    return (f"Called with Q {Q.shape}, K {K.shape} and V {V.shape}, it should return an output of shape "
            f"(n_q, d_v) = {(Q.shape[0], V.shape[1])} and weights of shape (n_q, n_k) = {(Q.shape[0], K.shape[0])}.")


def run(student, name, Q, K, V):
    """(output, weights); an exception the function raised is restated with the inputs' shapes."""
    try:
        return to_pair(call(student, name, Q, K, V), name)
    except StudentError as exc:
        if exc.raised in (None, "NotImplementedError"):
            raise
        said = f"{str(exc).rstrip('.')}. {expected_shapes(Q, K, V)}"
        entry = diagnose_square(name, (Q, K, V), Probe(student, name))
        if entry is None:
            raise StudentError(said, exc.diagnosis, exc.raised) from None
        raise StudentError(f"{said} On square inputs (n_q = n_k), where it runs: {entry.sentence}", entry.id,
                           exc.raised) from None


def shapes(student, name, Q, K, V):
    out, w = run(student, name, Q, K, V)
    want_out, want_w = (Q.shape[0], V.shape[1]), (Q.shape[0], K.shape[0])
    if out.shape == want_out and w.shape == want_w:
        return ok()
    return mismatch(student, name, (Q, K, V), (out, w),
                    f"With Q {Q.shape}, K {K.shape}, V {V.shape} the output should be (n_q, d_v) = "
                    f"{want_out} and the weights (n_q, n_k) = {want_w}; got {out.shape} and {w.shape}.")


def matches(student, name, reference, Q, K, V, rng):
    """Weights and output equal the engine's, on two inputs of the same shapes and on the first again,
    and the inputs are left as they were."""
    second = tuple(normal(rng, *a.shape) for a in (Q, K, V))
    r = repeat(student, name, lambda raw: to_pair(raw, name), (Q, K, V), second)
    want, want_second = reference(Q, K, V), reference(*second)
    problem = state_problem(name, r, want, want_second, "Q, K and V", "output and weights")
    if problem:
        return _nan(student, name, (Q, K, V), r.first) or fail(problem, student_weights=_plot(r.first[1]))
    for args, (out, w), (want_out, want_w) in (((Q, K, V), r.first, want), (second, r.second, want_second)):
        if not (close(w, want_w) and close(out, want_out)):
            what = "weights differ" if not close(w, want_w) else "output differs"
            return mismatch(student, name, args, (out, w), f"The {what} from the expected values.",
                            student_weights=_plot(w), expected_weights=want_w)
    problem = mutation_problem(name, r.changed)
    return fail(problem) if problem else ok()


def _plot(w):
    return w if w.ndim == 2 else []


def rows_sum_to_one(student, name, reference, Q, K, V, rng, *, square: bool = False):
    """Each query's weights over the keys are non-negative and sum to 1 (a transposed layout is the
    shapes check's to charge, so the keys' axis is found by its length; the message then speaks of
    the columns the student returned, not of a transposed copy); weights that do not depend on the
    inputs earn nothing."""
    out, w = run(student, name, Q, K, V)
    nothing = computes_nothing(student, name, reference, (Q, K, V), (out, w), rng, "rows that sum to 1",
                               square=square)
    if nothing:
        return nothing
    found = _query_rows(w, len(Q), len(K), "the weights")
    found = _query_rows(out, len(Q), len(K), "the first array returned") if found is None else found  # swapped
    if found is None:
        return mismatch(student, name, (Q, K, V), (out, w), "The weights should have one row per query and one "
                        f"column per key, shape (n_q, n_k) = ({Q.shape[0]}, {K.shape[0]}); got {w.shape}.")
    problem = row_problem(*found)
    if problem is None:
        return ok()
    return mismatch(student, name, (Q, K, V), (out, w), problem, locate=False, student_weights=w)


def computes_nothing(student, name, reference, case, pair, rng, judged: str, *, part: int = 1,
                     square: bool = False):
    """None when the function computes its answer (``part``: 0 output, 1 weights) from its inputs at all;
    else the failure that says it does not, before any property is judged on it."""
    if attends(student, name, reference, case, pair, part, rng, run, square=square):
        return None
    return _nan(student, name, case, pair) or fail(nothing_computed(name, ("output", "weights")[part], judged),
                                                  student_weights=_plot(pair[1]))


def _nan(student, name, case, pair):
    return nan_first(student, name, case, pair, {"weights": pair[1], "output": pair[0]})


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


def stable(student, name, reference, Q, K, V, rng, factor=300.0, *, square: bool = False):
    """Scores about ``factor**2`` times larger still give the right, finite answer. A mistake that already
    shows on ordinary inputs is the value check's to charge; here only overflow and large-input errors count,
    and weights that do not depend on the inputs earn nothing."""
    with np.errstate(all="ignore"):
        out, w = run(student, name, Q * factor, K * factor, V)
    finite = bool(np.all(np.isfinite(out)) and np.all(np.isfinite(w)))
    if finite and _right(reference, (out, w), Q * factor, K * factor, V):
        return ok()
    ordinary = run(student, name, Q, K, V)
    if not finite and any(np.isnan(a).any() for a in ordinary):              # NaN on ordinary inputs too
        return computes_nothing(student, name, reference, (Q, K, V), ordinary, rng, "stability", square=square) \
            or ok("ok (NaN on ordinary inputs too: the value and row checks charge it)")
    if finite and not _right(reference, ordinary, Q, K, V):
        nothing = computes_nothing(student, name, reference, (Q, K, V), ordinary, rng, "stability", square=square)
        return nothing or ok("ok (the values are charged by the value check)")
    what = "gives NaN or inf: exp() overflows" if not finite else "gives wrong values"
    though = ", although it is right on ordinary inputs" if _right(reference, ordinary, Q, K, V) else ""
    return mismatch(student, name, (Q * factor, K * factor, V), (out, w),
                    f"With scores in the thousands the function {what}{though}.")


def _right(reference, pair, Q, K, V) -> bool:
    want_out, want_w = reference(Q, K, V)
    return close(pair[1], want_w) and close(pair[0], want_out)
