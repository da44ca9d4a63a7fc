"""Questions as data: what the checks ask a student's function, and how the answers come back.

A check declares its questions (``Question``: the arguments, keyword arguments, whether the arguments are
sent back after the call, whether the call gets an earlier call's arrays with new values in them) before
any is asked. The grader sends one function's questions in one batch and gets one ``Reply`` per question:
a sandboxed student answers a batch in one round trip (``SandboxedStudent.ask``, one ``call_many``), an
in-process one (``NotebookFunctions``) here, call after call, the same way: the function gets copies of the
inputs, each answer is read after the last call of the batch, only what the wire carries comes back (plain
numbers and arrays, ``convert.plain``), and a question that raises fails alone with its own message.
"""
from __future__ import annotations

import contextlib
import io
import sys
from dataclasses import dataclass

import numpy as np

from ..sandbox.convert import plain
from ..sandbox.limits import Limits
from .hiding import grader_hidden
from .student import (StudentError, StudentRaised, callers_of, missing_error, note_environment,
                      raised_error)

MAX_RESULT = Limits().result_bytes


@dataclass(frozen=True)
class Question:
    """One call of a student's function: ``kwargs`` as (name, value) pairs; ``echo``: the arguments come back
    as they are right after the call; ``into``: the index (in the same batch) of an earlier question whose
    argument arrays this call gets, holding this question's values (the same objects: fresh arrays with an
    old ``id()``); ``draws``: the coverage property this question draws (``coverage.py``); ``hold``: its answer is
    read with the next question's (a group held together is read after its last call: a buffer the function
    returns each time shows as the last call's), else right after its call."""
    function: str
    args: tuple
    kwargs: tuple = ()
    echo: bool = False
    into: int | None = None
    draws: str | None = None
    hold: bool = False

    def key(self) -> tuple:
        """The question's content: the same for the same function, arguments and keyword arguments."""
        return (self.function, tuple(_part(a) for a in self.args), tuple((k, _part(v)) for k, v in self.kwargs))


@dataclass(frozen=True)
class Reply:
    """The answer to one question: the value as returned (plain data), or the StudentError of the call;
    ``after``: the arguments as they were after the call (echoed questions only, None when not sent)."""
    value: object = None
    error: StudentError | None = None
    after: tuple | None = None

    def get(self):
        """The value; the call's StudentError raised."""
        if self.error is not None:
            raise self.error
        return self.value


@dataclass(frozen=True)
class NotYet(Reply):
    """The place of a question not asked in the first batch: the evidence beyond its first call (``runner``), asked
    in the next batch only when a judge reads it. ``held``: what the runner keeps of the question's check."""
    held: object = None

    def get(self):
        self.held.needed = True
        raise NotAskedYet()


class NotAskedYet(Exception):
    """A judge read the reply to a question the runner has not asked yet: it judges again once it is asked."""


def _part(a):
    if isinstance(a, np.ndarray):
        return ("array", a.shape, a.dtype.str, a.tobytes())
    return (type(a).__name__, repr(a))


def ask(student, function: str, questions: list[Question]) -> list[Reply]:
    """The replies to ``questions`` (all of ``function``) in one batch: one round trip for a sandboxed student."""
    if not questions:
        return []
    student.rounds = getattr(student, "rounds", 0) + 1
    if hasattr(student, "ask"):
        return student.ask(function, questions)
    return in_process(student, function, questions)


def in_process(student, function: str, questions: list[Question]) -> list[Reply]:
    """The batch asked of a function in this process, as the sandboxed worker answers it."""
    fn = student.get(function) if hasattr(student, "get") else None
    missing = missing_error(student, function, fn)
    if missing is not None:
        return [Reply(error=missing) for _ in questions]
    kept, done, held = [], [None] * len(questions), []
    with _quiet_output():
        for k, q in enumerate(questions):
            args = _into(_copies(q.args), kept, q.into)
            kept.append(args)
            held.append((k, _one(student, function, fn, args, q)))
            if not q.hold:
                for i, (value, error, after) in held:
                    done[i] = _read(function, value, error, after)
                held = []
    for i, (value, error, after) in held:
        done[i] = _read(function, value, error, after)
    return done


def _one(student, function, fn, args, q: Question):
    """(value, exception, the arguments right after the call when echoed) of one call."""
    try:
        with grader_hidden():                                  # no `import solutions` in-process (hiding.py)
            value, error = fn(*args, **dict(q.kwargs)), None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - sys.exit() is a student error too
        origin = student.origin(exc) if hasattr(student, "origin") else None
        callers = callers_of(sys._getframe())                # who called it: hidden from its text, as the worker's
        value, error = None, raised_error(function, exc, getattr(student, "notebook", None), origin, callers)
        note_environment(student, function, error)
    return value, error, (_copies(args) if q.echo else None)


def _read(function: str, value, error, after) -> Reply:
    if error is not None:
        return Reply(error=error, after=after)
    kind, got = plain(value, MAX_RESULT)
    if kind == "refused":
        return Reply(error=StudentError(f"`{function}` returned a value the grader does not accept: {got}"),
                     after=after)
    return Reply(got, after=after)


def _copies(args) -> tuple:
    return tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args)


def _into(args: tuple, kept: list, index) -> tuple:
    """``args`` written into the arrays of question ``index``'s arguments where shapes and dtypes agree (the
    same objects, new values), as the worker does."""
    if index is None or not 0 <= index < len(kept):
        return args
    out = list(args)
    for i, a in enumerate(args):
        old = kept[index][i] if i < len(kept[index]) else None
        if isinstance(a, np.ndarray) and isinstance(old, np.ndarray) and old.shape == a.shape and old.dtype == a.dtype:
            np.copyto(old, a)
            out[i] = old
    return tuple(out)


class _Discard(io.TextIOBase):
    def writable(self):
        return True

    def write(self, s):
        return len(s)


@contextlib.contextmanager
def _quiet_output():
    """What the student's functions print while they are asked goes nowhere (the sandbox keeps its own)."""
    sink = _Discard()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        yield


def reply_of(function: str, outcome, notebook: str | None, echoed: bool = False) -> Reply:
    """A sandboxed call's outcome (a value, StudentRaised or StudentError; with ``echoed``, a pair with the
    arguments after it) as a Reply."""
    after = None
    if echoed and isinstance(outcome, tuple) and len(outcome) == 2:
        outcome, after = outcome
    if isinstance(outcome, StudentRaised):
        return Reply(error=raised_error(function, outcome, notebook), after=after)
    if isinstance(outcome, StudentError):
        return Reply(error=outcome, after=after)
    return Reply(outcome, after=after)
