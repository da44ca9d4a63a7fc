"""Which part of the student's softmax deviates, read from its own output on the check's input.

Used when no catalogue entry for ``softmax`` is proven. In order: NaN or inf (exp() overflowed),
negative values, the axis whose slices sum to 1 (another than the one asked for), slices that sum to
something else, and last the values within each slice: a softmax's log differs from its input by one
constant per slice, so log(output) = c * x + (a constant per slice) with c != 1 is a softmax of x
scaled by c, and no such c means the exponentials are not of x.
"""
from __future__ import annotations

import numpy as np

from .stages import Localisation

TOLERANCE = 1e-4
OVERFLOW = 709.0             # exp() of more than this is inf in float64 (and of less than -745, 0)
OVERFLOW_HALF = 11.0         # exp() of more than this is inf in float16


def localise_softmax(args: tuple, value, probe=None) -> Localisation | None:
    x = np.asarray(args[0], dtype=float)
    axis = args[1] if len(args) > 1 else -1
    out = np.asarray(value, dtype=float)
    if out.shape != x.shape or x.ndim == 0:
        return None                                   # the check's message already names the shapes
    asked = axis % x.ndim
    with np.errstate(all="ignore"):
        if not np.all(np.isfinite(out)):
            return _not_finite(x, args, out, probe)
        if np.any(out < 0):
            return Localisation("softmax", f"Your softmax returns negative values ({out.min():.3g}); exponentials "
                                "divided by their sum lie between 0 and 1.")
        summing = [a for a in range(x.ndim) if x.shape[a] > 1 and np.allclose(out.sum(axis=a), 1, rtol=TOLERANCE)]
        if asked not in summing:
            return _wrong_default(x, args, summing, probe) or _normalised_elsewhere(out, asked, summing, x)
        return _values(x, out, asked)


def _not_finite(x, args, out, probe) -> Localisation:
    """NaN or inf: an overflow only when the same input a hundred times smaller gives finite values."""
    what = "NaN" if np.isnan(out).any() else "inf"
    observed = f"Your softmax returns {what} for inputs up to {np.abs(x).max():.3g}"
    smaller = probe([smaller_input(args)])[0] if probe is not None else None
    if smaller is None or isinstance(smaller, Exception):
        return Localisation("nan", f"{observed}: find where it first appears (np.isnan, np.isinf).")
    if np.all(np.isfinite(np.asarray(smaller, dtype=float))):
        return Localisation("softmax", f"{observed}, and finite values for the same input a hundred times smaller: "
                            "exp() of inputs this large overflows (or underflows to 0, and 0/0 is NaN); subtract the "
                            "maximum along the axis before exponentiating.")
    if np.abs(x).max() / 100 >= OVERFLOW_HALF:
        return Localisation("nan", f"{observed}, also for the same input a hundred times smaller (up to "
                            f"{np.abs(x).max() / 100:.3g}): find where it first appears (np.isnan, np.isinf).")
    return Localisation("nan", f"{observed}, also for the same input a hundred times smaller, where no exp() "
                        "overflows: look for 0/0 or inf - inf (np.isnan, np.isinf).")


def given_last_axis(args: tuple) -> tuple | None:
    """softmax's input with axis=-1 written out, when the check called it without ``axis`` (else None)."""
    return (args[0], -1) if len(args) == 1 else None


def _wrong_default(x, args, summing, probe) -> Localisation | None:
    """Called without ``axis`` it normalises along another axis, and with axis=-1 given it is right: the parameter's
    default is wrong, not the axis it is given."""
    given = given_last_axis(args)
    if given is None or probe is None or not summing:
        return None
    out = probe([given])[0]
    if isinstance(out, Exception) or np.shape(out) != x.shape:
        return None
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    if not np.allclose(np.asarray(out, dtype=float), e / e.sum(axis=-1, keepdims=True), rtol=TOLERANCE, atol=1e-6):
        return None
    return Localisation("softmax-axis", f"Called without `axis`, your softmax normalises along axis {summing[0]}; "
                        "with axis=-1 given it is right: the default of `axis` is wrong. Give the parameter the default "
                        "-1 in the `def` line (`def softmax(x, axis=-1)`).")


def smaller_input(args: tuple) -> tuple:
    """The overflow test's input: x a hundred times smaller (the axis as given)."""
    return (np.asarray(args[0], dtype=float) / 100, *args[1:])


def _normalised_elsewhere(out, asked: int, summing: list[int], x=None) -> Localisation:
    if x is not None and np.abs(x).max() > OVERFLOW and not summing:
        sums = out.sum(axis=asked)
        return Localisation("softmax", f"For inputs up to {np.abs(x).max():.3g} the slices of your softmax along axis "
                            f"{asked} sum to values from {sums.min():.3g} to {sums.max():.3g}, not 1: exp() of inputs "
                            "this large overflows (or underflows to 0), so the exponentials cannot be divided by their "
                            "sum; subtract the maximum along the axis before exponentiating.")
    if summing:
        return Localisation("softmax-axis", f"The slices of your softmax along axis {summing[0]} sum to 1, not those "
                            f"along axis {asked}, the axis asked for: normalise along the axis you are given.")
    sums = out.sum(axis=asked)
    return Localisation("softmax", f"The slices of your softmax along axis {asked} sum to values from "
                        f"{sums.min():.3g} to {sums.max():.3g}, not 1: divide the exponentials by their sum "
                        "along that axis.")


def _values(x, out, axis: int) -> Localisation | None:
    """Fit log(out) = c * x + (a constant per slice) along ``axis``."""
    logs, xs = np.log(np.moveaxis(out, axis, -1)), np.moveaxis(x, axis, -1)
    y = (logs - logs.mean(axis=-1, keepdims=True)).ravel()
    t = (xs - xs.mean(axis=-1, keepdims=True)).ravel()
    if not np.all(np.isfinite(y)) or t @ t == 0:
        return None
    c = float(t @ y / (t @ t))
    if np.max(np.abs(y - c * t)) > 1e-3 * max(1.0, np.max(np.abs(y))):
        return Localisation("scores", "Your softmax's slices sum to 1, but they are not exponentials of the input "
                            "divided by their sum: check what is exponentiated (np.exp(x - max)).")
    if abs(c - 1) > 1e-3:
        return Localisation("scale", f"Your softmax is a softmax of x times {c:.4g}, not of x itself: exponentiate "
                            "x (less its maximum) without scaling it.")
    return None
