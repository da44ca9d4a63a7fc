"""What a check returns, and the helpers every check shares."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...misconceptions import diagnose
from ...misconceptions.localise import localise
from ...misconceptions.nan import nan_sentence
from ..student import StudentError, call, call_all, to_array, to_pair


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


def stateful(message: str, **details) -> Outcome:
    """A failure the state probe showed (``_state.py``): its stage is "state"."""
    return Outcome(False, message, details=_listify(details), stage="state")


def mismatch(student, function: str, args: tuple, student_value, message: str, *, locate: bool = True,
             **details) -> Outcome:
    """A failed comparison; names the misconception when a catalogue entry (or a compound) is proven to be
    what the student wrote, else the stage that deviates, when the student's own values show one."""
    probe = Probe(student, function)
    entry = diagnose(function, args, student_value, probe)
    if entry is None:
        where = localise(function, args, student_value, probe) if locate else None
        if where is None:
            return fail(message, **details)
        return Outcome(False, f"{message} {where.sentence}", stage=where.stage, details=_listify(details))
    return Outcome(False, f"{message} {entry.sentence}", diagnosis=entry.id, details=_listify(details))


def nan_first(student, function: str, args: tuple, value, parts: dict) -> Outcome | None:
    """Where the result is NaN (``parts``: what to call each array), and what the student's outputs show of its
    cause, in place of a state, constant or "computes nothing" judgement that NaN fools (NaN everywhere is the
    same for every input); None when there is no NaN."""
    said = nan_sentence(function, parts)
    if said is None:
        return None
    told = mismatch(student, function, args, value, f"`{function}` returns NaN.")
    return told if told.diagnosis or told.stage else fail(said)


class Probe:
    """Calls the student's ``function`` on the diagnosis's own inputs, in the checks' call form, and reads
    what comes back as the checks read it; a call that fails gives its StudentError in place of a value."""

    def __init__(self, student, function: str):
        self.student, self.function = student, function
        self.readings: dict = {}     # a count's reading (``misconceptions.counts.reading``), read once per probe

    def __call__(self, arg_list: list[tuple]) -> list:
        if self.function in COUNTS:
            return [v if isinstance(v, StudentError) else _captured(to_array, v, self.function)
                    for v in call_all(self.student, self.function, arg_list)]
        return [_captured(self._one, *args) for args in arg_list]

    def _one(self, *args):
        if self.function == "softmax" and len(args) == 2:
            return to_array(call(self.student, "softmax", args[0], axis=args[1]), "softmax")
        raw = call(self.student, self.function, *args)
        if self.function == "causal_mask":
            return read_mask(raw, self.function)
        return to_array(raw, self.function) if self.function == "softmax" else to_pair(raw, self.function)


COUNTS = ("attention_memory_bytes", "ffn_memory_bytes", "crossover_length")



def read_mask(raw, what: str) -> np.ndarray:
    """A mask as returned: truth values stay truth values (a keep-mask is not a 0/1 multiplier)."""
    arr = to_array(raw, what)
    return arr.astype(bool) if np.asarray(raw).dtype == bool else arr


def _captured(fn, *args):
    try:
        return fn(*args)
    except StudentError as exc:
        return exc


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
