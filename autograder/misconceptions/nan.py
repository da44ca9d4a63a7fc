"""Where a result is NaN, said before anything else is judged on it.

NaN equals nothing, not even itself, yet an array that is NaN everywhere is "the same" for every input
under a comparison that matches NaN with NaN: left to the later judgements, NaN-producing code would be
told it is cached by shape, a constant, or computes nothing from its inputs. So a result that holds NaN
is described first, by where it appears (``nan_sentence``), and localised (``localise.py``) by what its
own outputs show about the cause.
"""
from __future__ import annotations

import numpy as np


def nan_rows(value) -> np.ndarray | None:
    """The indices of the rows (the first axis) of ``value`` that hold NaN; None when it is not numeric."""
    try:
        arr = np.asarray(value, dtype=float)
    except Exception:  # noqa: BLE001 - not numeric: the checks say what came back
        return None
    if arr.ndim == 0:
        return np.flatnonzero([np.isnan(arr)])
    if arr.size == 0:                       # an empty array holds no NaN (reshape(0, -1) is undefined)
        return np.flatnonzero(np.zeros(len(arr), dtype=bool))
    return np.flatnonzero(np.isnan(arr).reshape(len(arr), -1).any(axis=1))


def where(value, what: str) -> str | None:
    """"your weights are NaN in rows 0 and 3 of 5", "... NaN everywhere", or None."""
    rows = nan_rows(value)
    if rows is None or not rows.size:
        return None
    arr = np.asarray(value, dtype=float)
    verb = "is" if what.endswith("output") else "are"
    if np.isnan(arr).all():
        return f"{what} {verb} NaN everywhere"
    if arr.ndim < 2:
        at = np.flatnonzero(np.isnan(arr.reshape(-1)))
        return f"{what} {verb} NaN at {_listed(at, 'index', 'indices')} of {arr.size}"
    return f"{what} {verb} NaN in {_listed(rows, 'row', 'rows')} of {len(arr)}"


def nan_sentence(function: str, parts: dict) -> str | None:
    """One sentence saying where each named part of the result (``{"weights": w, "output": out}``) is NaN."""
    said = [s for s in (where(v, f"the {k}") for k, v in parts.items()) if s]
    if not said:
        return None
    return (f"`{function}` returns NaN: {' and '.join(said)}. NaN comes from 0/0, inf - inf or a row whose scores "
            "are all -inf; find where it first appears (np.isnan).")


def _listed(indices, one: str, many: str) -> str:
    shown = [str(int(i)) for i in indices[:6]]
    if len(shown) == 1:
        return f"{one} {shown[0]}"
    if len(indices) > 6:
        return f"{many} {', '.join(shown)} and {len(indices) - 6} more"
    return f"{many} {', '.join(shown[:-1])} and {shown[-1]}"
