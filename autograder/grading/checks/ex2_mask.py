"""ex2_mask: causal_mask(n) is an (n, n) float array, 0 on and below the diagonal, -inf above."""
from __future__ import annotations

import numpy as np

from ..student import StudentError, call_all, to_array
from ...tolerance import same_values
from ._base import fail, mismatch, ok

SIZES = (1, 2, 7, 64)
HIDDEN_AT_MOST = -1e9   # -inf is the contract; a large finite negative such as -1e9 also hides a key


def _masks(student):
    """(n, mask, its dtype) for each of SIZES in turn, all asked for in one round trip; a failed call
    raises where the check reaches it, as a call made there would."""
    for n, raw in zip(SIZES, call_all(student, "causal_mask", [(n,) for n in SIZES])):
        if isinstance(raw, StudentError):
            raise raw
        yield n, to_array(raw, f"causal_mask({n})"), getattr(raw, "dtype", None)


def shape_and_dtype(student, rng):
    for n, m, dtype in _masks(student):
        if m.shape != (n, n):
            return fail(f"causal_mask({n}) has shape {m.shape}; it should be ({n}, {n}).")
        if dtype is None or np.dtype(dtype).kind != "f":
            return fail(f"causal_mask({n}) has dtype {dtype}; it should be a float array so it can be "
                        "added to the scores (0.0 and -np.inf).")
    return ok()


def values(student, rng):
    for n, m, dtype in _masks(student):
        if m.shape != (n, n):
            raise StudentError(f"causal_mask({n}) has shape {m.shape}; it should be ({n}, {n}).")
        above = np.triu(np.ones((n, n), dtype=bool), 1)
        if np.all(m[~above] == 0) and np.all(m[above] <= HIDDEN_AT_MOST):
            continue
        bad = _first_bad(m, above)
        truth = dtype is not None and np.dtype(dtype) == bool         # a keep-mask's truth values stay so
        returned = m.astype(bool) if truth else m
        value = "NaN" if np.isnan(m[bad]) else str(returned[bad]) if truth else f"{m[bad]:g}"
        return mismatch(student, "causal_mask", (n,), returned, f"causal_mask({n})[{bad[0]}, {bad[1]}] is {value}; "
                        "entries on and below the diagonal should be 0 and entries above it -inf.")
    return _same_again(student, SIZES[2])


def _same_again(student, n):
    """A second call with the same n gives the same mask (state is charged here, with the values)."""
    first, again = call_all(student, "causal_mask", [(n,), (n,)])
    for raw in (first, again):
        if isinstance(raw, StudentError):
            raise raw
    if same_values(to_array(again, f"causal_mask({n})"), to_array(first, f"causal_mask({n})")):
        return ok()
    return fail(f"causal_mask({n}) returned another array when called again with the same n: its result changes "
                "between identical calls. Build the mask from n alone on every call (and never change a mask "
                "in place that a later call returns again).")


def _first_bad(m, above):
    wrong = np.where(above, ~(m <= HIDDEN_AT_MOST), m != 0)      # NaN is wrong on both sides
    return tuple(int(v) for v in np.argwhere(wrong)[0])
