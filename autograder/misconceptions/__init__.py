"""The misconception catalogue: known-wrong implementations kept beside the checks.

When a check fails, ``diagnose`` looks for an entry for that function whose output is the
student's, first among single entries, then pairs, then triples of entries that turn different
knobs of the same pipeline (``pipeline.py``); the id of a compound is the ids joined by "+",
e.g. ``no-scaling+mask-after-softmax``. Ids are a contract (feedback, reports and tests use them).

A match on the check's one input is only a suspicion. An entry is named when it is proven
(``proof.py``): it also reproduces the student's values on fresh probe inputs (``probes.py``),
at least ``MIN_EVIDENCE`` of them inputs where the entry differs from the right answer. When
nothing is proven, ``localise.py`` says which stage deviates instead (``counts.py`` for memory
counts, ``maskshape.py`` for the causal mask), or nothing.
"""
from __future__ import annotations

import functools
import itertools

from .entry import Misconception

COMPOUND = "+"
# the pipeline's knobs in the order their stages run: a compound names its mistakes in this order
KNOB_ORDER = ("scale", "mask", "axis", "stable", "ret", "power", "widen", "dtype", "unit", "shift")
MAX_TRIPLES = 64         # a bound on the triples tried for one function (a test checks it holds)


def _catalogue() -> list[Misconception]:
    from . import attention, masking, memory
    return [*attention.ENTRIES, *masking.ENTRIES, *memory.ENTRIES]


CATALOGUE: list[Misconception] = _catalogue()
IDS = sorted({m.id for m in CATALOGUE})


def entries_for(function: str) -> list[Misconception]:
    return [m for m in CATALOGUE if m.function == function]


@functools.cache
def compounds_for(function: str, size: int = 2) -> tuple[Misconception, ...]:
    """Every ``size`` entries of this function that turn different knobs, each as one compound entry."""
    from .pipeline import variant
    found = []
    for group in itertools.combinations([m for m in entries_for(function) if m.knobs], size):
        knobs = [k for m in group for k in m.knobs]
        if len(set(knobs)) < len(knobs) or len({m.id for m in group}) < size:
            continue
        parts = tuple(sorted(group, key=_stage))
        merged = {k: v for m in parts for k, v in m.knobs.items()}
        found.append(Misconception(COMPOUND.join(m.id for m in parts), function, variant(function, merged),
                                   " ".join(m.advice for m in parts), merged, parts,
                                   any(m.proportional for m in parts)))
    return tuple(found)


def tiers(function: str) -> tuple[tuple[Misconception, ...], ...]:
    """The candidates in the order they are tried: singles, then pairs, then (bounded) triples."""
    return tuple(entries_for(function)), compounds_for(function, 2), compounds_for(function, 3)[:MAX_TRIPLES]


def _stage(entry: Misconception) -> int:
    return min(KNOB_ORDER.index(k) for k in entry.knobs)


def diagnose(function: str, args: tuple, student_value, probe) -> Misconception | None:
    """The first candidate (singles, pairs, triples) proven to be what the student wrote, else None.

    ``probe(arg_list)`` calls the student's ``function`` on each args in the list and returns the
    values (a StudentError in place of a value whose call failed)."""
    from .proof import Evidence
    evidence = Evidence(function, args, student_value, probe)
    for scaled in (False, True):                 # exact variants first; a constant factor only after them all
        for tier in tiers(function):
            for entry in tier:
                if (entry.proportional or not scaled) and evidence.proves(entry, scaled):
                    return entry
    return None
