"""What a check returns, and the helpers every check shares."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..misconceptions import diagnose
from ..misconceptions.localise import localise


@dataclass
class Outcome:
    passed: bool
    message: str
    diagnosis: str | None = None
    details: dict = field(default_factory=dict)   # small arrays for feedback plots (lists)
    stage: str | None = None     # with no diagnosis: the stage that deviates (misconceptions/localise.py)


def ok(message: str = "ok") -> Outcome:
    return Outcome(True, message)


def fail(message: str, **details) -> Outcome:
    return Outcome(False, message, details=_listify(details))


def mismatch(function: str, args: tuple, student_value, message: str, *, locate: bool = True,
             **details) -> Outcome:
    """A failed comparison; names the misconception when a catalogue entry (or a pair) reproduces it,
    else the stage that deviates, when the student's own outputs show one."""
    entry = diagnose(function, args, student_value)
    if entry is None:
        where = localise(function, args, student_value) if locate else None
        if where is None:
            return fail(message, **details)
        return Outcome(False, f"{message} {where.sentence}", stage=where.stage, details=_listify(details))
    return Outcome(False, f"{message} {entry.sentence}", diagnosis=entry.id, details=_listify(details))


def _listify(details: dict) -> dict:
    out = {}
    for key, value in details.items():
        arr = np.asarray(value, dtype=float)
        if arr.size <= 4096:
            out[key] = np.where(np.isfinite(arr), arr, np.nan).tolist() if arr.ndim else float(arr)
    return out


def pick_sizes(rng: np.random.Generator, count: int, low: int = 2, high: int = 10) -> list[int]:
    """``count`` different sizes in [low, high), so a transposed or swapped axis cannot hide."""
    return [int(v) for v in rng.choice(np.arange(low, high), size=count, replace=False)]


def normal(rng: np.random.Generator, *shape, scale: float = 1.0) -> np.ndarray:
    return rng.normal(0.0, scale, shape)
