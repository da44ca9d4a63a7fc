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

import numpy as np

from .probes import seeded
from .proof import Evidence
from .entry import Misconception
from .tiered import (CATALOGUE, COMPOUND, IDS, KNOB_ORDER, MAX_TRIPLES, _stage, compounds_for,  # noqa: F401
                     entries_for, tiers)


def diagnose(function: str, args: tuple, student_value, probe) -> Misconception | None:
    """The first candidate (singles, pairs, triples) proven to be what the student wrote, else None.

    ``probe(arg_list)`` calls the student's ``function`` on each args in the list and returns the
    values (a StudentError in place of a value whose call failed)."""
    from .fit import contradicts, fitted   # the knobs fitted on designed probes: any spelling, dtype or failure
    evidence = Evidence(function, args, student_value, probe)
    for scaled in (False, True):     # exact variants first; a constant factor (singles only) after them all
        for tier in tiers(function):
            for entry in tier:
                if (entry.constant or not scaled) and evidence.proves(entry, entry.constant if scaled else None) \
                        and _identifiable(entry, evidence) and not contradicts(entry, function, args, probe):
                    return entry
    found = fitted(function, args, probe, student_value)
    if found is not None:
        return found
    from .units import bytes_as_gb         # a family the catalogue's one realisation does not cover
    return bytes_as_gb(function, args, student_value, probe)


def square_input(args: tuple) -> tuple | None:
    """Square inputs (n_k = n_q) built like ``args`` (attention inputs with n_q != n_k), drawn from them; else None."""
    Q, K, V = (np.asarray(a) for a in args)
    if Q.ndim != 2 or K.ndim != 2 or V.ndim != 2 or len(Q) == len(K):
        return None
    rng = seeded(args)
    return rng.normal(0, 1, Q.shape), rng.normal(0, 1, (len(Q), K.shape[1])), rng.normal(0, 1, (len(Q), V.shape[1]))


def diagnose_square(function: str, args: tuple, probe) -> Misconception | None:
    """For an attention function that raised on these inputs (n_q != n_k): the entry proven on square inputs
    built like them (n_k = n_q), where it runs, else None; exercise 2's square causal mask copied into
    cross-attention only broadcasts there."""
    square = square_input(args)
    if square is None or probe is None:
        return None
    value = probe([square])[0]
    if isinstance(value, Exception):
        return None
    return diagnose(function, square, value, probe)


def _identifiable(entry: Misconception, evidence) -> bool:
    """Every part of a compound is needed: without it, the rest (times a constant a student may have written
    in where a part of the rest drops an argument) does not reproduce the values. A count of n * d_model * 8 is a missing expansion, an
    ignored dtype_bytes and bits, or expansion = 4 and fp16's 2 written in: the 8 proves nothing (but
    1e-9 is no dtype's size, so n * n * 2 / 1e9 does prove a count in GB)."""
    for part in entry.parts:
        rest = [p for p in entry.parts if p is not part]
        other = rest[0] if len(rest) == 1 else _compound(entry.function, rest)
        constants = [p.written_in for p in rest if p.written_in]
        if other is not None and evidence.proves(other, _any(constants) if constants else None):
            return False
    return True


def _any(constants):
    return lambda c: any(allowed(c) for allowed in constants)


def _compound(function: str, parts: list[Misconception]) -> Misconception | None:
    name = COMPOUND.join(p.id for p in parts)
    return next((c for c in compounds_for(function, len(parts)) if c.id == name and c.knobs == {
        k: v for p in parts for k, v in p.knobs.items()}), None)


from .followups import follow_ups  # noqa: E402, F401 - the diagnosis's questions, declared (after the catalogue)
