"""The misconception catalogue: known-wrong implementations kept beside the checks.

When a check fails, ``diagnose`` runs every entry for that function on the same
inputs; an entry whose output matches the student's names the misconception.
When no single entry does, pairs of entries that turn different knobs of the
same pipeline (``pipeline.py``) are tried, and a match names both:
the id of a compound is the two ids joined by "+", e.g. ``no-scaling+mask-after-softmax``.
Ids are a contract (feedback, reports and tests use them). When nothing
reproduces the value, ``localise.py`` says which stage deviates instead.
"""
from __future__ import annotations

import functools
import itertools
import warnings

import numpy as np

from ..tolerance import same_values
from .entry import Misconception

COMPOUND = "+"
# the pipeline's knobs in the order their stages run: a compound names its mistakes in this order
KNOB_ORDER = ("scale", "mask", "axis", "stable", "ret", "power", "widen", "dtype", "unit", "shift")


def _catalogue() -> list[Misconception]:
    from . import attention, masking, memory
    return [*attention.ENTRIES, *masking.ENTRIES, *memory.ENTRIES]


CATALOGUE: list[Misconception] = _catalogue()
IDS = sorted({m.id for m in CATALOGUE})


def entries_for(function: str) -> list[Misconception]:
    return [m for m in CATALOGUE if m.function == function]


@functools.cache
def compounds_for(function: str) -> tuple[Misconception, ...]:
    """Every pair of this function's entries that turn different knobs, as one compound entry."""
    from .pipeline import variant
    pairs = []
    for a, b in itertools.combinations([m for m in entries_for(function) if m.knobs], 2):
        if _stage(b) < _stage(a):
            a, b = b, a
        if a.id != b.id and not set(a.knobs) & set(b.knobs):
            pairs.append(Misconception(f"{a.id}{COMPOUND}{b.id}", function, variant(function, {**a.knobs, **b.knobs}),
                                       f"{a.advice} {b.advice}", {**a.knobs, **b.knobs}, (a, b)))
    return tuple(pairs)


def _stage(entry: Misconception) -> int:
    return min(KNOB_ORDER.index(k) for k in entry.knobs)


def _reproduces(entry: Misconception, args: tuple, student_value) -> bool:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            value = entry.impl(*args)
        except Exception:  # noqa: BLE001 - a variant that cannot run on these inputs
            return False
    return same_values(student_value, value)


def diagnose(function: str, args: tuple, student_value) -> Misconception | None:
    """The first entry for ``function`` that reproduces the student's value, else the first compound."""
    for entry in entries_for(function):
        if _reproduces(entry, args, student_value):
            return entry
    return next((c for c in compounds_for(function) if _reproduces(c, args, student_value)), None)
