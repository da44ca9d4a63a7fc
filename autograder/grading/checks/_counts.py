"""What a wrong byte count is, read from how it relates to the exact count (exercise 3).

Three slips that the catalogue of misconceptions does not model get a message of their own:
an integer that overflowed (it wrapped around, or its dtype cannot hold the count), a float too
narrow to hold the count exactly, and a unit conversion (kB, KiB, MB, MiB), with or without
floor division. A count in GB or GiB is the catalogue's bytes-as-gb family, named by the diagnosis
(``misconceptions/units.py``), not here. A unit is named only when it reproduces every answer of the check and at least two
of them are non-zero and different: one input that happens to fit is no proof (0 fits every unit).
"""
from __future__ import annotations

import numpy as np

UNITS = ((1000, "1000", "kB"), (1024, "1024", "KiB"), (10**6, "10**6", "MB"), (2**20, "2**20", "MiB"))


def count_slip(name: str, cases: list[tuple], answers: list, exact: list[int]) -> str | None:
    """One sentence naming the slip behind a check's wrong answers, or None."""
    found = slip_and_stage(name, cases, answers, exact)
    return found[1] if found else None


def slip_and_stage(name: str, cases: list[tuple], answers: list, exact: list[int]) -> tuple[str, str] | None:
    """(the stage that deviates, the sentence naming the slip), or None: a count too big or too precise for
    its number type is the stage "count-dtype", a unit conversion the stage "unit"."""
    for args, raw, want in zip(cases, answers, exact):
        slip = _narrow(name, args, raw, want)
        if slip:
            return "count-dtype", slip
    unit = _unit(name, cases, answers, exact)
    return ("unit", unit) if unit else None


def _narrow(name: str, args: tuple, raw, want: int) -> str | None:
    """The answer's own dtype cannot hold the exact count (numpy keeps a scalar's dtype, and so does the
    sandbox's wire), so it overflowed or was rounded."""
    dtype = np.asarray(raw).dtype if isinstance(raw, (np.ndarray, np.generic)) else None
    value = number(raw)
    if value is None or value == want:
        return None
    call = f"{name}{args} = {_text(value)}, but the exact count is {want:,}:"
    if dtype is not None and dtype.kind in "iu" and want > np.iinfo(dtype).max:
        return (f"{call} more than {dtype.name} holds (at most {np.iinfo(dtype).max:,}), so the multiplication "
                "overflowed and wrapped around. Compute the count with Python ints (`int(n)`) or `np.int64`.")
    if dtype is not None and dtype.kind == "f" and dtype.itemsize < 8:
        finfo = np.finfo(dtype)
        if want > finfo.max:
            return (f"{call} more than {dtype.name} holds (at most {float(finfo.max):g}), so it overflowed. "
                    f"Count with Python ints, not `{dtype.name}`.")
        if value == float(np.asarray(want, dtype=dtype)):
            return (f"{call} {dtype.name} holds whole numbers exactly only up to {2 ** (finfo.nmant + 1):,}, so "
                    f"the count was rounded. Count with Python ints, not `{dtype.name}`.")
    return None


def _unit(name: str, cases, answers, exact) -> str | None:
    values = [number(raw) for raw in answers]
    if any(v is None for v in values):
        return None
    for k, shown, unit in UNITS:
        for floor in (True, False):
            scaled = [w // k if floor else w / k for w in exact]
            if not all(_same(v, s) for v, s in zip(values, scaled)):
                continue
            if len({s for s in scaled if s}) < 2:
                continue                          # too few informative answers to tell this unit apart
            i = next(i for i, s in enumerate(scaled) if s and exact[i] != values[i])
            how = f"floor-divided by {shown} (`// {shown}`)" if floor else f"divided by {shown}"
            tail = (" Floor division also rounds every count under one unit down to 0." if floor else "")
            return (f"{name}{cases[i]} = {_text(values[i])} is the exact count {exact[i]:,} {how}, a count in "
                    f"{unit}: return the number of bytes itself, with no unit conversion.{tail}")
    return None


def _same(value: float, scaled: float) -> bool:
    try:
        return value == scaled or (scaled != 0 and abs(value - scaled) <= 1e-9 * abs(scaled))
    except OverflowError:                   # an int beyond any float is no count in any unit
        return False


def number(raw) -> float | int | None:
    """The answer as a Python number (exact for integers), or None when it is not one number."""
    if isinstance(raw, (bool, np.bool_)):
        return None
    if isinstance(raw, int):
        return raw
    try:
        arr = np.asarray(raw)
    except Exception:  # noqa: BLE001 - anything else the student returned
        return None
    if arr.shape != () or arr.dtype.kind not in "iuf":
        return None
    value = arr.item()
    return value if arr.dtype.kind in "iu" or not np.isfinite(value) else float(value)


def _text(value) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:.6g}"
