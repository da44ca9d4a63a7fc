"""Tolerances used by every comparison (documented for students and instructors).

Answers are compared in float64 with rtol = 1e-4 and atol = 1e-6: tight enough
to catch every misconception in the catalogue, loose enough that a float32
implementation, a loop, einsum or a -1e9 mask gets full marks. An answer the student
returned in float16 (about 3 significant digits) is read as ``HalfPrecision`` and
compared to 1e-2, what float16 can hold: right float16 code gets full marks too.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

RTOL = 1e-4
ATOL = 1e-6
HALF_TOL = 1e-2          # float16 keeps 11 significant bits: 1e-2 is about ten of its steps near 1


class HalfPrecision(np.ndarray):
    """A float64 copy of an answer the student returned in float16; results computed from it stay one."""


def tolerance(*values) -> tuple[float, float]:
    """(rtol, atol) for comparing these values: wider when one of them was returned in float16."""
    half = any(isinstance(v, HalfPrecision) for v in values)
    return (HALF_TOL, HALF_TOL) if half else (RTOL, ATOL)


def allclose(a, b, rtol: float, atol: float, equal_nan: bool = False) -> bool:
    """``bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))``, the same element test in the same
    ufuncs, without numpy's argument handling (which costs three times the test on the grader's small arrays) when
    ``a`` is a real ndarray and ``b`` a float one, and ``rtol``, ``atol`` finite Python floats; else numpy's own."""
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype.kind in "biuf"
            and b.dtype.kind == "f" and type(rtol) is float and type(atol) is float
            and math.isfinite(rtol) and math.isfinite(atol)):
        return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))
    with np.errstate(invalid="ignore"):                 # as np.isclose: inf - inf, NaN compared
        result = np.less_equal(abs(a - b), atol + rtol * abs(b)) & np.isfinite(b) | (a == b)
        if equal_nan:
            result |= np.isnan(a) & np.isnan(b)
    return bool(result.all())


def close(got: np.ndarray, expected: np.ndarray) -> bool:
    rtol, atol = tolerance(got, expected)
    got, expected = np.asarray(got), np.asarray(expected)
    return got.shape == expected.shape and allclose(got, expected, rtol, atol)


def all_close(pairs) -> bool:
    """``close(got, expected)`` for every pair, in one element test per tolerance rather than one per pair (the
    grader compares a check's dozen small answers at once): the same verdict, as the test is element by element."""
    groups: dict[tuple, tuple[list, list]] = {}
    for got, expected in pairs:
        tol = tolerance(got, expected)
        got, expected = np.asarray(got), np.asarray(expected)
        if got.dtype != np.float64 or expected.dtype != np.float64:
            if not close(got, expected):
                return False
            continue
        if got.shape != expected.shape:
            return False
        mine, theirs = groups.setdefault(tol, ([], []))
        mine.append(got.ravel())
        theirs.append(expected.ravel())
    return all(allclose(np.concatenate(mine), np.concatenate(theirs), *tol) for tol, (mine, theirs) in groups.items())


def same_values(got, expected) -> bool:
    """Like close, but NaN and inf in the same places count as equal (for diagnosis)."""
    if isinstance(expected, (tuple, list)):
        return (isinstance(got, (tuple, list)) and len(got) == len(expected)
                and all(same_values(g, e) for g, e in zip(got, expected)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got, expected = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    except Exception:  # noqa: BLE001 - anything the student returned that is not numeric
        return False
    if got.shape != expected.shape:
        return False
    return allclose(got, expected, RTOL, ATOL, equal_nan=True)
