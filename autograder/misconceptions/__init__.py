"""The misconception catalogue: known-wrong implementations kept beside the checks.

When a check fails, ``diagnose`` runs every entry for that function on the same
inputs; an entry whose output matches the student's names the misconception.
Ids are a contract (feedback, reports and tests use them).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..compare import same_values


@dataclass(frozen=True)
class Misconception:
    id: str
    function: str               # the exercise function this variant imitates
    impl: Callable              # same signature and return shape as the exercise function
    advice: str                 # what the student should change


def _catalogue() -> list[Misconception]:
    from . import attention, masking, memory
    return [*attention.ENTRIES, *masking.ENTRIES, *memory.ENTRIES]


CATALOGUE: list[Misconception] = _catalogue()
IDS = sorted({m.id for m in CATALOGUE})


def entries_for(function: str) -> list[Misconception]:
    return [m for m in CATALOGUE if m.function == function]


def diagnose(function: str, args: tuple, student_value) -> Misconception | None:
    """The first catalogue entry for ``function`` that reproduces the student's value."""
    for entry in entries_for(function):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                value = entry.impl(*args)
            except Exception:  # noqa: BLE001 - a variant that cannot run on these inputs
                continue
        if same_values(student_value, value):
            return entry
    return None


def by_id(mid: str) -> Misconception:
    return next(m for m in CATALOGUE if m.id == mid)
