"""When a catalogue entry counts as proven: the rule of DESIGN.md "a diagnosis names only what it has proven".

An entry is proven when its variant reproduces the student's values on the check's own input and on
every probe input (``probes.py``), and at least ``MIN_EVIDENCE`` of those probes are inputs where the
variant differs from the right answer (an input where the mistake cannot show proves nothing), and on
some input the variant gives a number that is not NaN (a variant that is NaN on every input, such as a
compound whose rows all have nothing to normalise, matches any NaN-producing code and proves nothing). The
student is called on the probes once per diagnosis, and only when some candidate matches the check's
own input. An entry with a ``constant`` (a count "linear in n" whatever whole number the student wrote
for the missing n, or one that ignores dtype_bytes whatever itemsize stands for it) may differ from
the student by one such constant factor, the same on every input.
"""
from __future__ import annotations

import warnings

import numpy as np

import solutions

from ..tolerance import HALF_TOL, HalfPrecision
from .probes import COUNT_RTOL, COUNTS, RTOL, agree, probe_inputs

MIN_EVIDENCE = 3


def _run(fn, args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return fn(*args)
        except Exception:  # noqa: BLE001 - a variant (or the engine) that cannot run on these inputs
            return None


class Evidence:
    """The check's input and the student's value on it; the probes and the student's values on them
    (asked for once, when first needed)."""

    def __init__(self, function: str, args: tuple, value, probe):
        self.function, self.args, self.value, self.probe = function, args, value, probe
        self._asked = False
        self.rtol = COUNT_RTOL if function in COUNTS else RTOL
        self.inputs: list[tuple] = []
        self.answers: list | None = None
        self._right: dict[int, object] = {}

    def proves(self, entry, constant=None) -> bool:
        """Does ``entry`` reproduce every value (times one factor that ``constant`` allows, when given)?"""
        view = entry.view or _whole
        own = _run(entry.impl, self.args)
        factor = _factor(self.value, own) if constant else 1.0
        if constant and (factor is None or not constant(factor)):
            return False
        if own is None or factor is None or not self._agree(view, self.args, self.value, _times(own, factor)):
            return False
        answers = self._answers()
        if answers is None:
            return False
        evidence, numbers = 0, _a_number_somewhere(view(self.args, own))
        for k, (args, answer) in enumerate(zip(self.inputs, answers)):
            said = _run(entry.impl, args)
            if said is None or not self._agree(view, args, answer, _times(said, factor)):
                return False
            numbers = numbers or _a_number_somewhere(view(args, said))
            right = self._reference(k, args)
            evidence += right is not None and not self._agree(view, args, _times(said, factor), right)
        return evidence >= MIN_EVIDENCE and numbers       # NaN on every input reproduces nothing: not a name

    def _agree(self, view, args, got, want) -> bool:
        """The two values agree on what the entry's family fixes (``families.py``), to the precision the student's
        value came in (an answer returned in float16 holds about three digits)."""
        parts = got if isinstance(got, (tuple, list)) else (got,)
        rtol = HALF_TOL if any(isinstance(p, HalfPrecision) for p in parts) else self.rtol
        return agree(view(args, got), view(args, want), rtol)

    def _reference(self, k: int, args: tuple):
        if k not in self._right:
            self._right[k] = _run(getattr(solutions, self.function), args)
        return self._right[k]

    def _answers(self) -> list | None:
        """The student's values on the probes, or None when any call failed (then nothing is proven)."""
        if not self._asked:
            self._asked = True
            self.inputs = probe_inputs(self.function, self.args)
            answers = self.probe(self.inputs) if self.probe is not None else None
            ok = answers is not None and not any(isinstance(a, Exception) for a in answers)
            self.answers = list(answers) if ok else None
        return self.answers


def _a_number_somewhere(value) -> bool:
    parts = value if isinstance(value, (tuple, list)) else (value,)
    try:
        return any((~np.isnan(np.asarray(p, dtype=float))).any() for p in parts)
    except Exception:  # noqa: BLE001 - not numeric: agree() says it does not match
        return True


def _whole(args, value):
    return value


def _factor(value, own) -> float | None:
    """The one constant c with value = c * own, for plain numbers (a count); None when there is none."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v, o = float(np.asarray(value, dtype=float)), float(np.asarray(own, dtype=float))
    except Exception:  # noqa: BLE001 - whatever the student returned that is not one number
        return None
    if not (np.isfinite(v) and np.isfinite(o)) or o == 0 or v == 0:
        return None
    return v / o


def _times(value, factor: float):
    return value if factor == 1.0 or value is None else np.asarray(value, dtype=float) * factor
