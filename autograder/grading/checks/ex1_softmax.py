"""ex1_softmax: the student's softmax(x, axis).

Three properties, each charged once: the values along the last axis, that the
``axis`` argument is honoured, and stability for large inputs.
"""
from __future__ import annotations

import numpy as np

import solutions as S

from ..student import StudentError, call, to_array
from ...tolerance import close
from ._base import fail, mismatch, nan_first, normal, ok, stateful
from ._evidence import array_unproven
from ._state import Varied, mutation_problem, repeat, state_problem


def _run(student, x, **kwargs):
    """The student's softmax(x, **kwargs) as an array; an exception it raised is restated with the input's
    shape, as the attention checks restate theirs."""
    try:
        return _array(call(student, "softmax", x, **kwargs))
    except StudentError as exc:
        raise _restated(exc, x, kwargs) from None


def _array(raw):
    return to_array(raw, "the result of `softmax`")


def _restated(exc: StudentError, x, kwargs) -> StudentError:
    if exc.raised in (None, "NotImplementedError"):
        return exc
    axis = kwargs.get("axis")
    given, along = (f" and axis={axis}", f"axis {axis}") if axis is not None else ("", "the last axis")
    return StudentError(f"{str(exc).rstrip('.')}. Called with x of shape {x.shape}{given}, it should return "
                        f"an array of shape {x.shape} whose slices along {along} sum to 1.",
                        exc.diagnosis, exc.raised)


def rows_sum_to_one(student, rng):
    """The values along the last axis (the default axis): on the check's input, on another of the same shape
    and on the first again (state is charged here), then on one row, one column and a fresh, larger shape,
    with the input left as it was."""
    x = normal(rng, *rng.integers(2, 7, size=2), scale=2.0)
    x2 = normal(rng, *x.shape, scale=2.0)
    try:
        r = repeat(student, "softmax", _array, (x,), [(x2,)])
    except StudentError as exc:
        raise _restated(exc, x, {}) from None
    if r.first.shape != x.shape:
        return mismatch(student, "softmax", (x,), r.first, f"softmax of a {x.shape} array returned shape {r.first.shape}; "
                        "it should keep the input's shape.")
    varied = [Varied((x2,), S.softmax(x2), "a new x", ("x",))]
    problem = state_problem(student, "softmax", _array, r, (x,), S.softmax(x), varied, ("values",))
    if problem:
        return (nan_first(student, "softmax", (x,), r.first, {"values": r.first}) or _nothing(student, rng, x, "the values")
                or stateful(problem))
    m = int(rng.integers(2, 7))
    more = [normal(rng, 1, m, scale=2.0), normal(rng, m, 1, scale=2.0), normal(rng, *rng.integers(10, 40, size=2))]
    for arg, got in ((x, r.first), (x2, r.varied[0])) + tuple((a, _run(student, a)) for a in more):
        if not close(got, S.softmax(arg)):
            return _wrong_values(student, rng, arg, got)
    problem = mutation_problem("softmax", r.changed)
    return fail(problem) if problem else ok()


def _wrong_values(student, rng, x, got):
    nothing = _nothing(student, rng, x, "the values")
    if nothing:
        return nothing
    if got.shape != x.shape:
        return fail(f"softmax of a {x.shape} array returned shape {got.shape}; it should keep the input's shape "
                    "(a size of 1 is still an axis).")
    return mismatch(student, "softmax", (x,), got, f"softmax(x) of an x of shape {x.shape} does not match "
                    "exp(x) / sum(exp(x)) along the last axis (each row should sum to 1).")


def _nothing(student, rng, x, judged: str, **kwargs):
    """None when softmax is shown to compute its values from x (``_evidence.py``); else the failure that
    says it is not."""
    unproven = array_unproven(student, _run, x, rng, **kwargs)
    if unproven is None:
        return None
    return fail(f"`softmax` {unproven}: it does not compute its values from x, so this check ({judged}) earns nothing. "
                "Compute exp(x - max) / sum(exp(x - max)) along `axis`.")


def any_axis(student, rng):
    """softmax(x, axis=a) is right, or at least equals the student's own last-axis softmax moved to
    axis a (then the values are the first check's to charge, and the axis is honoured)."""
    x = normal(rng, *rng.choice(np.arange(2, 7), size=3, replace=False), scale=2.0)
    nothing = _nothing(student, rng, x, "honouring `axis`", axis=-1)
    if nothing:
        return nothing
    for axis in (0, 1, -1):
        got = _run(student, x, axis=axis)
        if close(got, S.softmax(x, axis=axis)) or _honours_axis(student, x, axis, got):
            continue
        return mismatch(student, "softmax", (x, axis), got, f"softmax(x, axis={axis}) on a 3-D array is wrong: "
                        f"the slices along axis {axis} should each sum to 1.")
    return ok()


def _honours_axis(student, x, axis, got) -> bool:
    last = _run(student, np.moveaxis(x, axis, -1))
    wrong_anyway = not close(last, S.softmax(np.moveaxis(x, axis, -1)))
    return wrong_anyway and last.shape == np.moveaxis(x, axis, -1).shape and close(got, np.moveaxis(last, -1, axis))


def stable_for_large_inputs(student, rng):
    """Inputs near 1e4 give finite, right values; a mistake that shows on ordinary inputs too is not
    charged again here."""
    x = normal(rng, 3, 5)
    with np.errstate(all="ignore"):
        got = _run(student, x * 1e4)
    if not np.all(np.isfinite(got)):
        return mismatch(student, "softmax", (x * 1e4,), got, "softmax of inputs near 1e4 gives NaN or inf: exp() overflows.")
    if close(got, S.softmax(x * 1e4)):
        return _nothing(student, rng, x, "stability") or ok()
    ordinary = _run(student, x)
    if not close(ordinary, S.softmax(x)):                # wrong anyway: the value check's to charge
        return _nothing(student, rng, x, "stability") or ok()
    return mismatch(student, "softmax", (x * 1e4,), got, "softmax of inputs near 1e4 is wrong, although it is right "
                    "on ordinary inputs.")
