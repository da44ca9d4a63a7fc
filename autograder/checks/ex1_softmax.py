"""ex1_softmax: the student's softmax(x, axis).

Three properties, each charged once: the values along the last axis, that the
``axis`` argument is honoured, and stability for large inputs.
"""
from __future__ import annotations

import numpy as np

import solutions as S

from ..student import StudentError, call, to_array
from ..tolerance import close
from ._base import mismatch, normal, ok


def _run(student, x, **kwargs):
    """The student's softmax(x, **kwargs) as an array; an exception it raised is restated with the input's
    shape, as the attention checks restate theirs."""
    try:
        return to_array(call(student, "softmax", x, **kwargs), "the result of `softmax`")
    except StudentError as exc:
        if exc.raised in (None, "NotImplementedError"):
            raise
        axis = kwargs.get("axis")
        given, along = (f" and axis={axis}", f"axis {axis}") if axis is not None else ("", "the last axis")
        raise StudentError(f"{str(exc).rstrip('.')}. Called with x of shape {x.shape}{given}, it should return "
                           f"an array of shape {x.shape} whose slices along {along} sum to 1.",
                           exc.diagnosis, exc.raised) from None


def rows_sum_to_one(student, rng):
    x = normal(rng, *rng.integers(2, 7, size=2), scale=2.0)
    got = _run(student, x)
    if got.shape != x.shape:
        return mismatch(student, "softmax", (x,), got, f"softmax of a {x.shape} array returned shape {got.shape}; "
                        "it should keep the input's shape.")
    if not close(got, S.softmax(x)):
        return mismatch(student, "softmax", (x,), got, "softmax(x) does not match exp(x) / sum(exp(x)) along the "
                        "last axis (each row should sum to 1).")
    return ok()


def any_axis(student, rng):
    """softmax(x, axis=a) is right, or at least equals the student's own last-axis softmax moved to
    axis a (then the values are the first check's to charge, and the axis is honoured)."""
    x = normal(rng, *rng.choice(np.arange(2, 7), size=3, replace=False), scale=2.0)
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
    if close(got, S.softmax(x * 1e4)) or not close(_run(student, x), S.softmax(x)):
        return ok()
    return mismatch(student, "softmax", (x * 1e4,), got, "softmax of inputs near 1e4 is wrong, although it is right "
                    "on ordinary inputs.")
