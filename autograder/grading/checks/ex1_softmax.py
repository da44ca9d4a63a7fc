"""ex1_softmax: the student's softmax(x, axis).

Three properties, each charged once: the values along the last axis, that the
``axis`` argument is honoured, and stability for large inputs.
"""
from __future__ import annotations

import numpy as np

import solutions as S

from ..student import StudentError, call, to_array
from ...tolerance import close, same_values
from ._base import fail, mismatch, nan_first, normal, ok
from ._state import mutation_problem, repeat, state_problem


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
    """The values along the last axis, on two inputs of the same shape and on the first again (state is
    charged here), with the input left as it was."""
    x = normal(rng, *rng.integers(2, 7, size=2), scale=2.0)
    x2 = normal(rng, *x.shape, scale=2.0)
    try:
        r = repeat(student, "softmax", _array, (x,), (x2,))
    except StudentError as exc:
        raise _restated(exc, x, {}) from None
    if r.first.shape != x.shape:
        return mismatch(student, "softmax", (x,), r.first, f"softmax of a {x.shape} array returned shape {r.first.shape}; "
                        "it should keep the input's shape.")
    problem = state_problem("softmax", r, S.softmax(x), S.softmax(x2), "x", "values")
    if problem:
        return nan_first(student, "softmax", (x,), r.first, {"values": r.first}) or fail(problem)
    for arg, got in ((x, r.first), (x2, r.second)):
        if not close(got, S.softmax(arg)):
            return mismatch(student, "softmax", (arg,), got, "softmax(x) does not match exp(x) / sum(exp(x)) along the "
                            "last axis (each row should sum to 1).")
    problem = mutation_problem("softmax", r.changed)
    return fail(problem) if problem else ok()


def _nothing(student, rng, x, got, judged: str, **kwargs):
    """None when softmax computes its values from x at all (right on x, or two inputs of a fresh shape
    give different values); else the failure that says it does not."""
    if close(got, S.softmax(x, **kwargs)):
        return None
    fresh = normal(rng, *rng.choice(np.arange(8, 30), size=x.ndim, replace=False), scale=2.0)
    one = _run(student, fresh, **kwargs)
    if close(one, S.softmax(fresh, **kwargs)) or not same_values(one, _run(student, fresh + normal(rng, *fresh.shape), **kwargs)):
        return None
    args = (x, kwargs["axis"]) if "axis" in kwargs else (x,)
    return nan_first(student, "softmax", args, got, {"values": got}) or fail(f"`softmax` returns the same values for different inputs (two calls with other values of the same, "
                f"fresh shape): it does not compute them from x, so this check ({judged}) earns nothing. Compute "
                "exp(x - max) / sum(exp(x - max)) along `axis`.")


def any_axis(student, rng):
    """softmax(x, axis=a) is right, or at least equals the student's own last-axis softmax moved to
    axis a (then the values are the first check's to charge, and the axis is honoured)."""
    x = normal(rng, *rng.choice(np.arange(2, 7), size=3, replace=False), scale=2.0)
    nothing = _nothing(student, rng, x, _run(student, x, axis=-1), "honouring `axis`", axis=-1)
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
        return ok()
    ordinary = _run(student, x)
    if not close(ordinary, S.softmax(x)):                # wrong anyway: the value check's to charge
        return _nothing(student, rng, x, ordinary, "stability") or ok()
    return mismatch(student, "softmax", (x * 1e4,), got, "softmax of inputs near 1e4 is wrong, although it is right "
                    "on ordinary inputs.")
