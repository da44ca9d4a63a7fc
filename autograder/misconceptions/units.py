"""bytes-as-gb as a family: the byte count expressed in GB or GiB, at whatever resolution the answer shows.

The catalogue's entry is one realisation (bytes / 1e9, every digit kept). The family is defined by the
mistake: the answer is the right number of bytes divided by 10**9 or 2**30, exactly, or rounded to the
places it shows (``round`` to its decimals, ``ceil``, ``floor``), the same way on every input. Its evidence
is the memory localiser's reading (``counts.py``): a few ordinary base points with each argument doubled and
tripled, read at larger sizes until the answers show at least ``MIN_DIGITS`` significant digits, so an
answer rounded to 0 or 1 everywhere proves nothing; every answer and the check's own must fit, and every
one of them differs from the right count. A count with a second mistake (a wrong power, an ignored
dtype_bytes) is not the right count in any unit, and is left to the localiser.
"""
from __future__ import annotations

import dataclasses

import numpy as np

import solutions

from .counts import exactly, last_place, reading, rounded
from .entry import Misconception
from .memory import ENTRIES

GIGA = ((1e-9, "10**9", "GB"), (2 ** -30, "2**30", "GiB"))
FUNCTIONS = ("attention_memory_bytes", "ffn_memory_bytes")


def bytes_as_gb(function: str, args: tuple, value, probe) -> Misconception | None:
    """The catalogue's bytes-as-gb entry, said as the student wrote it, when every answer read is the byte
    count in GB or GiB at the answer's resolution; else None."""
    if function not in FUNCTIONS:
        return None
    own = _one_number(value)
    read = reading(function, args, probe) if own is not None else None
    if read is None:
        return None
    got, right, ulp = read.every()
    got, ulp = np.append(got, own), np.append(ulp, last_place(own))
    right = np.append(right, float(getattr(solutions, function)(*args)))
    for ratio, shown, unit in GIGA:
        how = _resolution(got, right * ratio, ulp)
        if how is not None:
            entry = next(e for e in ENTRIES if e.function == function and e.id == "bytes-as-gb")
            return dataclasses.replace(entry, advice=f"the result is the number of bytes divided by {shown}, a "
                                       f"count in {unit}{how}; return the exact number of bytes (an integer), with "
                                       "no unit or rounding.")
    return None


def _resolution(got, want, ulp) -> str | None:
    """How ``got`` shows ``want``: "" when exactly, ", rounded ... as shown for reading" when rounded the same
    way on every input to the places each answer shows; None when neither."""
    if all(exactly(g, w) for g, w in zip(got, want)):
        return ""
    how = rounded(got, want, ulp)
    return f", {how} as shown for reading" if how else None


def _one_number(value) -> float | None:
    try:
        v = float(np.asarray(value, dtype=float))
    except Exception:  # noqa: BLE001 - the student's object (its __array__ may raise anything; 10**400 overflows)
        return None
    return v if np.isfinite(v) else None
