"""What a check returns, and what it asks when its verdict needs more answers.

A check's judge returns an ``Outcome``, or a ``Later`` whose outcome takes the answers to more questions (asked in
one more batch per function, ``runner.py``): a ``Pending`` diagnosis (the misconception proven, else the stage
that deviates) or a check's own ``FollowUp``. A ``Probe`` reads such answers as the checks read them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..misconceptions import diagnose, follow_ups
from ..misconceptions.fit import fit_inputs, fitted
from ..misconceptions.localise import localise
from ..misconceptions.nan import nan_sentence
from .asking import Question, ask
from .student import StudentError, to_array, to_pair


@dataclass
class Outcome:
    passed: bool
    message: str
    diagnosis: str | None = None
    details: dict = field(default_factory=dict)   # small arrays for feedback plots (lists)
    stage: str | None = None     # with no diagnosis: the stage that deviates (misconceptions/localise.py)
    credit: float = 0.0          # of a failed check: the share of its points evidenced parts earn (0 to 1)


def ok(message: str = "ok") -> Outcome:
    return Outcome(True, message)


def fail(message: str, **details) -> Outcome:
    return Outcome(False, message, details=_listify(details))


def stateful(message: str, **details) -> Outcome:
    """A failure the state probe showed (``_state.py``): its stage is "state"."""
    return Outcome(False, message, details=_listify(details), stage="state")


class Plan:
    """A check's questions (``questions``, all asked before it judges) and whatever else its judge reads."""

    def __init__(self, questions=(), **data):
        self.questions = list(questions)
        self.__dict__.update(data)


class Later:
    """An outcome that takes the answers to more questions of ``function``, asked in one batch with the other
    checks' (``runner.py``), after every check's first batch: ``questions()`` (in groups, each asked as it is
    listed) and ``resolve(probe) -> Outcome``, with a Probe that reads their answers. ``credit``: the share of
    the check's points its evidenced parts earn, whatever the answers say (``credited``)."""
    function: str
    credit = 0.0

    def questions(self) -> list[list[Question]]:
        raise NotImplementedError

    def resolve(self, probe) -> Outcome:
        raise NotImplementedError


@dataclass
class FollowUp(Later):
    """A check's own question that depends on its first answers: ``then(probe) -> Outcome`` once the ``groups``
    (inputs, as a Probe takes them) have been asked."""
    function: str
    groups: list
    then: Callable

    def questions(self) -> list[list[Question]]:
        return [[question(self.function, args) for args in group] for group in self.groups]

    def resolve(self, probe) -> Outcome:
        return self.then(probe)


def credited(outcome, credit: float):
    """The outcome (an Outcome or a Later) with the share of the check's points its evidenced parts earn."""
    if credit <= 0:
        return outcome
    if isinstance(outcome, Outcome):
        outcome.credit = max(outcome.credit, credit)
    else:
        outcome.credit = credit
    return outcome


def answer(value):
    """A Probe's value, its StudentError raised."""
    if isinstance(value, StudentError):
        raise value
    return value


@dataclass
class Pending(Later):
    """A failed comparison whose message names what the student wrote, when more answers prove it: the catalogue
    entry (or compound) proven, else the stage that deviates (with ``locate``), else ``otherwise`` (the message
    itself by default). Its questions are asked in one batch with the other checks' (``runner.py``)."""
    function: str
    args: tuple
    value: object
    message: str
    details: dict = field(default_factory=dict)
    locate: bool = True
    otherwise: str | None = None
    stage: str | None = None        # the stage the check itself observed deviating, said when nothing more is shown

    def questions(self) -> list[list[Question]]:
        """The follow-up questions, in groups as the diagnosis asks them (``misconceptions.follow_ups``)."""
        groups = follow_ups(self.function, self.args, self.value, self.locate)
        return [[question(self.function, args) for args in group] for group in groups]

    def resolve(self, probe) -> Outcome:
        entry = diagnose(self.function, self.args, self.value, probe)
        if entry is not None:
            return Outcome(False, f"{self.message} {entry.sentence}", diagnosis=entry.id, details=self.details)
        where = localise(self.function, self.args, self.value, probe) if self.locate else None
        if where is not None:
            return Outcome(False, f"{self.message} {where.sentence}", stage=where.stage, details=self.details)
        return Outcome(False, self.otherwise or self.message, details=self.details, stage=self.stage)


@dataclass
class Raised(Later):
    """The function raised on one of the coverage table's cases (scores in the thousands, integer inputs ...):
    ``message`` says so; what it does is then read off the designed probes (``misconceptions.fit``), so an
    exception (math.exp's OverflowError) names its family as inf or NaN would."""
    function: str
    args: tuple
    message: str
    error: StudentError | None = None

    def questions(self) -> list[list[Question]]:
        return [[question(self.function, a) for a in group] for group in fit_inputs(self.function, self.args)]

    def resolve(self, probe) -> Outcome:
        entry = fitted(self.function, self.args, probe, self.error or RuntimeError())
        if entry is not None:
            return Outcome(False, f"{self.message} {entry.sentence}", diagnosis=entry.id)
        return Outcome(False, self.message, getattr(self.error, "diagnosis", None))


class Deferred(Exception):
    """Raised from within a judge: its outcome is this Pending's (a count explained only by a diagnosis)."""

    def __init__(self, pending: Pending):
        super().__init__(pending.message)
        self.pending = pending


def mismatch(function: str, args: tuple, student_value, message: str, *, locate: bool = True,
             otherwise: str | None = None, observed: str | None = None, **details) -> Pending:
    """A failed comparison: names the misconception when a catalogue entry (or a compound) is proven to be what
    the student wrote, else the stage that deviates, when the student's own values show one, else ``observed``
    (the stage the check's own inputs isolate, if any)."""
    return Pending(function, args, student_value, message, _listify(details), locate, otherwise, observed)


def nan_first(function: str, args: tuple, value, parts: dict, context: str = "") -> Pending | None:
    """Where the result is NaN (``parts``: what to call each array), and what the student's outputs show of its
    cause, in place of a state, constant or "computes nothing" judgement that NaN fools (NaN everywhere is the
    same for every input); None when there is no NaN."""
    said = nan_sentence(function, parts)
    if said is None:
        return None
    return mismatch(function, args, value, f"`{function}` returns NaN{context}.", otherwise=said)


def question(function: str, args: tuple) -> Question:
    """A diagnosis's input as a question, in the checks' call form (softmax's ``(x, axis)`` with axis by name)."""
    if function == "softmax" and len(args) == 2:
        return Question(function, (args[0],), (("axis", args[1]),))
    return Question(function, tuple(args))


class Probe:
    """Asks the student's ``function`` the diagnosis's own inputs, in the checks' call form, and reads what comes
    back as the checks read it; a call that fails gives its StudentError in place of a value. ``source``: where
    the replies come from (``questions -> replies``: the follow-up batch already asked); by default each request
    is asked of the student at once."""

    def __init__(self, student, function: str, source: Callable | None = None):
        self.student, self.function = student, function
        self.source = source or (lambda questions: ask(student, function, questions))
        self.readings: dict = {}     # a count's reading (``misconceptions.counts.reading``), read once per probe

    def __call__(self, arg_list: list[tuple]) -> list:
        replies = self.source([question(self.function, args) for args in arg_list])
        return [_captured(self._read, r) for r in replies]

    def _read(self, reply):
        raw = reply.get()
        if self.function in COUNTS or self.function == "softmax":
            return to_array(raw, self.function)
        if self.function == "causal_mask":
            return read_mask(raw, self.function)
        return to_pair(raw, self.function)


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


def listified(**details) -> dict:
    """Details for feedback plots: small arrays as lists (NaN and inf as NaN)."""
    return _listify(details)


def _listify(details: dict) -> dict:
    out = {}
    for key, value in details.items():
        arr = np.asarray(value, dtype=float)
        if arr.size <= 4096:
            out[key] = np.where(np.isfinite(arr), arr, np.nan).tolist() if arr.ndim else float(arr)
    return out
