"""Checks shared by every (output, weights) attention function (exercises 1, 2 and 4).

Each check charges its own property once: the shapes, the values, the rows'
normalisation, stability on large scores. A mistake that one check owns does not
fail the others (transposed weights cost the shapes and values, not the row sums).
The hidden cases cover the input space: a size of 1 in each dimension (the shapes check,
and the value check where the shapes are right), two widths d_k and fresh, larger sizes
(the value check). The value check also owns state (``_state.py``). The property checks
earn nothing from a function not shown to compute from its inputs (``_evidence.py``).
"""
from __future__ import annotations

import numpy as np

import solutions as S

from ..student import StudentError, call, to_pair
from ...tolerance import close, tolerance
from ...misconceptions import diagnose_square
from ._base import Probe, fail, mismatch, nan_first, normal, ok, pick_sizes, stateful
from ._evidence import attention_unproven, fresh_case
from ._state import Varied, mutation_problem, repeat, state_problem

REFERENCE = {"scaled_dot_product_attention": S.scaled_dot_product_attention,
             "causal_attention": S.causal_attention, "cross_attention": S.cross_attention}
ONE = {"n_q": "one query (n_q = 1: one decoder position)", "n_k": "one key (n_k = 1)", "d_k": "d_k = 1",
       "d_v": "d_v = 1"}


def case(rng, *, square: bool = False):
    """Q, K, V with n_q, n_k, d_k, d_v all different (n_q == n_k when square)."""
    n_q, n_k, d_k, d_v = pick_sizes(rng, 4, 2, 10)
    n_k = n_q if square else n_k
    return normal(rng, n_q, d_k), normal(rng, n_k, d_k), normal(rng, n_k, d_v)


def size_one_cases(rng, *, square: bool = False) -> list[tuple[str, tuple]]:
    """(dimension, Q K V) with that dimension of size 1 and the others different and at least 2 (n_q and
    n_k stay equal when square, so only d_k and d_v are 1 there: n = 1 is the single-token check's)."""
    out = []
    for dim in ("d_k", "d_v") if square else ("n_q", "n_k", "d_k", "d_v"):
        sizes = dict(zip(("n_q", "n_k", "d_k", "d_v"), pick_sizes(rng, 4, 2, 10)))
        sizes[dim] = 1
        if square:
            sizes["n_k"] = sizes["n_q"]
        out.append((dim, (normal(rng, sizes["n_q"], sizes["d_k"]), normal(rng, sizes["n_k"], sizes["d_k"]),
                          normal(rng, sizes["n_k"], sizes["d_v"]))))
    return out


def expected_shapes(Q, K, V) -> str:
    return (f"Called with Q {Q.shape}, K {K.shape} and V {V.shape}, it should return an output of shape "
            f"(n_q, d_v) = {(Q.shape[0], V.shape[1])} and weights of shape (n_q, n_k) = {(Q.shape[0], K.shape[0])}.")


def run(student, name, Q, K, V):
    """(output, weights); an exception the function raised is restated with the inputs' shapes and, when
    it runs on inputs of the same sizes made square (or with d_v = d_k), with what those inputs show."""
    try:
        return to_pair(call(student, name, Q, K, V), name)
    except StudentError as exc:
        if exc.raised in (None, "NotImplementedError"):
            raise
        raise restated(student, name, exc, (Q, K, V)) from None


def restated(student, name, exc: StudentError, args: tuple) -> StudentError:
    """The error with the inputs' shapes, and what inputs of the same sizes in another class show: the entry
    proven on square inputs, else (square, or d_v = d_k) that it is right there, or the stage that deviates."""
    message = f"{str(exc).rstrip('.')}. {expected_shapes(*args)}"
    entry = diagnose_square(name, args, Probe(student, name))
    if entry is not None:
        return StudentError(f"{message} On square inputs (n_q = n_k), where it runs: {entry.sentence}", entry.id,
                            exc.raised)
    for said, other in _other_shapes(*args):
        try:
            pair = to_pair(call(student, name, *other), name)
        except StudentError:
            continue
        if _right(REFERENCE[name], pair, *other):
            return StudentError(f"{message} It runs and is right {said}: it must work for any sizes.",
                                raised=exc.raised)
        told = mismatch(student, name, other, pair, "")
        if told.diagnosis or told.stage:
            return StudentError(f"{message} {said[0].upper()}{said[1:]}, where it runs:{told.message}",
                                told.diagnosis, exc.raised, told.stage)
        return StudentError(f"{message} It runs {said}, but its answer there is wrong too.", raised=exc.raised)
    return StudentError(message, exc.diagnosis, exc.raised)


def _other_shapes(Q, K, V):
    """Inputs of the same sizes in another class: square (n_k = n_q), and with d_v = d_k."""
    if len(K) != len(Q):
        rows = np.resize(np.arange(len(K)), len(Q))
        yield "with as many keys as queries (n_k = n_q)", (Q, K[rows], V[rows])
    if V.shape[1] != K.shape[1]:
        cols = np.resize(np.arange(V.shape[1]), K.shape[1])
        yield "with d_v = d_k", (Q, K, V[:, cols])


def shapes(student, name, Q, K, V, rng=None):
    """The shapes on the check's inputs, then with a size of 1 in each dimension in turn."""
    out, w = run(student, name, Q, K, V)
    want_out, want_w = (Q.shape[0], V.shape[1]), (Q.shape[0], K.shape[0])
    if out.shape != want_out or w.shape != want_w:
        return mismatch(student, name, (Q, K, V), (out, w),
                        f"With Q {Q.shape}, K {K.shape}, V {V.shape} the output should be (n_q, d_v) = "
                        f"{want_out} and the weights (n_q, n_k) = {want_w}; got {out.shape} and {w.shape}.")
    for dim, (Q1, K1, V1) in size_one_cases(rng) if rng is not None else ():
        out, w = run(student, name, Q1, K1, V1)
        want_out, want_w = (Q1.shape[0], V1.shape[1]), (Q1.shape[0], K1.shape[0])
        if out.shape != want_out or w.shape != want_w:
            return fail(f"With {ONE[dim]}, Q {Q1.shape}, K {K1.shape} and V {V1.shape}, the output should be "
                        f"(n_q, d_v) = {want_out} and the weights (n_q, n_k) = {want_w}; got {out.shape} and "
                        f"{w.shape}{_squeezed(out.shape, want_out, w.shape, want_w)}. A size of 1 is still an axis: "
                        "keep every axis whatever its length.")
    return ok()


def _squeezed(*shapes) -> str:
    got = shapes[0::2]
    want = shapes[1::2]
    if all(g == tuple(d for d in w if d != 1) for g, w in zip(got, want)):
        return " (the axes of length 1 are dropped, as np.squeeze drops them)"
    return ""


def matches(student, name, reference, Q, K, V, rng, *, square: bool = False):
    """Weights and output equal the engine's: on the check's inputs, with one argument changed at a time
    and on the first inputs again (state, ``_state.py``), at a second width d_k, with a size of 1 in each
    dimension (where the shapes are right: with a shapes check, wrong shapes are its to charge) and at
    fresh, larger sizes; the inputs are left as they were."""
    varied = [Varied(args, reference(*args), said, new, alone) for args, said, new, alone in _varied(rng, Q, K, V)]
    convert = lambda raw: to_pair(raw, name)                    # noqa: E731
    try:
        r = repeat(student, name, convert, (Q, K, V), [v.args for v in varied])
    except StudentError as exc:
        if exc.raised in (None, "NotImplementedError"):
            raise
        raise restated(student, name, exc, (Q, K, V)) from None
    problem = state_problem(student, name, convert, r, (Q, K, V), reference(Q, K, V), varied, ("output", "weights"))
    if problem:
        return (_nan(student, name, (Q, K, V), r.first) or _not_computing(student, name, reference, r.first, rng, square)
                or stateful(problem, student_weights=_plot(r.first[1])))
    answers = [((Q, K, V), r.first, True)] + [(v.args, got, True) for v, got in zip(varied, r.varied)]
    for args, strict in _more_cases(rng, (Q, K, V), square):
        answers.append((args, run(student, name, *args), strict))
    for args, (out, w), strict in answers:
        want_out, want_w = reference(*args)
        if not strict and (out.shape, w.shape) != (want_out.shape, want_w.shape):
            continue                                     # a size-1 shape: the shapes check's to charge
        if not (close(w, want_w) and close(out, want_out)):
            return _wrong(student, name, reference, args, (out, w), rng, square, args is answers[0][0])
    problem = mutation_problem(name, r.changed)
    return fail(problem) if problem else ok()


def _varied(rng, Q, K, V):
    """The state probe's inputs: (args, how said, the new arguments, stale_only); each argument new alone too,
    so a cache keyed on any subset of Q, K and V returns an earlier answer for one of them."""
    K2, V2 = normal(rng, *K.shape), normal(rng, *V.shape)
    yield (Q, K2, V2), "the same Q with new K and V", ("K", "V"), False
    yield (normal(rng, *Q.shape), K, V), "the same K and V with a new Q", ("Q",), False
    yield (Q, K2, V), "the same Q and V with a new K", ("K",), True
    yield (Q, K, V2), "the same Q and K with a new V", ("V",), True


def _more_cases(rng, case: tuple, square: bool):
    """(args, strict) beyond the state probe: a second width, each size of 1, fresh larger sizes. ``strict``
    is False where a wrong shape is the shapes check's (size 1 in a function that has one)."""
    Q, K, V = case
    d_k = int(rng.choice([d for d in range(2, 10) if d not in (Q.shape[1], V.shape[1])]))
    yield (normal(rng, len(Q), d_k), normal(rng, len(K), d_k), V), True
    for _, args in size_one_cases(rng, square=square):
        yield args, square
    yield fresh_case(rng, square=square), True


def _not_computing(student, name, reference, pair, rng, square):
    """The value check's "computes nothing" failure, when neither part is shown computed (``_evidence``)."""
    unproven = attention_unproven(student, name, reference, rng, run, part=1, square=square)
    if unproven and attention_unproven(student, name, reference, rng, run, part=0, square=square):
        return fail(nothing_computed(name, "weights", unproven, "the values"), student_weights=_plot(pair[1]))
    return None


def _wrong(student, name, reference, args, pair, rng, square, first):
    """A value mismatch: said as "computes nothing" when the function is not shown to compute (``_evidence``),
    else as the comparison that failed, with the misconception or stage it shows."""
    out, w = pair
    want_out, want_w = reference(*args)
    nan = _nan(student, name, args, pair)                    # NaN first: it equals itself for any input
    if nan:
        return nan
    nothing = _not_computing(student, name, reference, pair, rng, square)
    if nothing:
        return nothing
    what = "weights differ" if not close(w, want_w) else "output differs"
    shown = "" if first else " (with " + ", ".join(f"{a} {x.shape}" for a, x in zip("QKV", args)) + ")"
    return mismatch(student, name, args, pair, f"The {what} from the expected values{shown}.",
                    student_weights=_plot(w), expected_weights=want_w)


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
    """None when the function is shown to compute its answer (``part``: 0 output, 1 weights) from its
    inputs (``_evidence.py``); else the failure that says it is not, before any property is judged on it."""
    if np.size(pair[part]) and np.isnan(pair[part]).all():       # NaN everywhere equals itself for any input
        return _nan(student, name, case, pair)
    unproven = attention_unproven(student, name, reference, rng, run, part=part, square=square, judged=judged)
    if unproven is None:
        return None
    return fail(nothing_computed(name, ("output", "weights")[part], unproven, judged), student_weights=_plot(pair[1]))


def nothing_computed(name: str, what: str, observed: str, judged: str) -> str:
    return (f"`{name}` {observed}: it does not compute them from Q, K and V, so this check ({judged}) "
            "earns nothing. Compute the weights as softmax(Q K^T / sqrt(d_k)) and the output as weights @ V.")


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
        return computes_nothing(student, name, reference, (Q, K, V), (out, w), rng, "stability", square=square) or ok()
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
