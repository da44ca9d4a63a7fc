"""The catalogue's entries and the candidates ``diagnose`` tries, singles, pairs and (bounded) triples: apart
from the package so that what the package imports (``fit``) can read them without importing it."""
from __future__ import annotations

import functools
import itertools

from .entry import Misconception
from .families import composed
from .pipeline import variant
from . import attention, masking, memory

COMPOUND = "+"
# the pipeline's knobs in the order their stages run: a compound names its mistakes in this order
KNOB_ORDER = ("scale", "mask", "axis", "over", "peak", "stable", "ret", "power", "widen", "dtype", "unit", "shift")
MAX_TRIPLES = 64         # a bound on the triples tried for one function (a test checks it holds)


def _catalogue() -> list[Misconception]:
    return [*attention.ENTRIES, *masking.ENTRIES, *memory.ENTRIES]


CATALOGUE: list[Misconception] = _catalogue()
IDS = sorted({m.id for m in CATALOGUE})


def entries_for(function: str) -> list[Misconception]:
    return [m for m in CATALOGUE if m.function == function]


@functools.cache
def compounds_for(function: str, size: int = 2) -> tuple[Misconception, ...]:
    """Every ``size`` entries of this function that turn different knobs, each as one compound entry."""
    found = []
    for group in itertools.combinations([m for m in _members(function, size) if m.knobs], size):
        knobs = [k for m in group for k in m.knobs]
        if len(set(knobs)) < len(knobs) or len({m.id for m in group}) < size:
            continue
        parts = tuple(sorted(group, key=_stage))
        merged = {k: v for m in parts for k, v in m.knobs.items()}
        found.append(Misconception(COMPOUND.join(m.id for m in parts), function, variant(function, merged),
                                   " ".join(m.advice for m in parts), merged, parts,
                                   view=composed(m.view for m in parts)))
    return tuple(found)


def _members(function: str, size: int) -> list[Misconception]:
    """The entries a compound of ``size`` is made of: every realisation in a pair, the first of each family
    in a triple (so the bounded triples stay those of one realisation each)."""
    entries = entries_for(function)
    if size < 3:
        return entries
    seen: set[str] = set()
    return [m for m in entries if not (m.id in seen or seen.add(m.id))]


def tiers(function: str) -> tuple[tuple[Misconception, ...], ...]:
    """The candidates in the order they are tried: singles, then pairs, then (bounded) triples."""
    return tuple(entries_for(function)), compounds_for(function, 2), compounds_for(function, 3)[:MAX_TRIPLES]


def _stage(entry: Misconception) -> int:
    return min(KNOB_ORDER.index(k) for k in entry.knobs)
