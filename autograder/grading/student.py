"""Calling the student's functions and reading what they return.

Everything that can go wrong on the student's side becomes a ``StudentError``
whose text is a message for the student; nothing from the student is trusted
beyond plain numeric arrays, which are copied into fresh float64 ndarrays.
"""
from __future__ import annotations

import functools
import importlib.util
import linecache
from pathlib import Path

import numpy as np

from ..assignment import FUNCTIONS
from ..sandbox.origin import UNREADABLE, exception_text, exception_type, raised_in
from ..sandbox.allowed import HIDDEN_PACKAGES
from ..tolerance import HalfPrecision

MAX_MESSAGE = 300


class StudentError(Exception):
    """The student's function is missing, raised, or returned something unusable.

    ``diagnosis`` optionally names a catalogue misconception that explains it, or ``stage`` the stage
    that deviates (``misconceptions/localise.py``) when no entry does.
    """

    def __init__(self, message: str, diagnosis: str | None = None, raised: str | None = None,
                 stage: str | None = None):
        super().__init__(message)
        self.diagnosis = diagnosis
        self.raised = raised            # the type name, when the student's function raised
        self.stage = stage

    environment: str | None = None      # a package the function imports that is not installed where it runs


class StudentRaised(Exception):
    """An exception raised by the student's function in another process: its type name and message,
    the student function it was raised in (``origin``) and, for a NameError, the missing name."""

    def __init__(self, type_name: str, message: str, origin: str | None = None, missing: str | None = None,
                 late: bool = False):
        super().__init__(message)
        self.type_name, self.origin, self.missing = type_name, origin, missing
        self.late = late          # the worker ended the call at its time (or did not ask it): nothing was raised


class NotebookFunctions:
    """The functions one notebook defines (its namespace), as the rubric's checks see them."""

    def __init__(self, namespace: dict, notebook: str | None = None):
        self.namespace, self.notebook = namespace, notebook
        self.events: list[str] = []         # what needs a person (a package missing here: ``note_environment``)

    def get(self, name: str):
        return self.namespace.get(name)

    def origin(self, exc: BaseException) -> str | None:
        return raised_in(exc, self.namespace)


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


def raised_error(name: str, exc: BaseException, notebook: str | None = None, origin: str | None = None,
                 callers: frozenset = frozenset()) -> StudentError:
    """What the student reads when their function raised (here or in the sandboxed worker).

    A stub or missing helper is named with its notebook (``helper_message``); otherwise the
    exception's message is always part of it, an empty one is said to be empty, and the
    release's stub (a bare ``raise NotImplementedError()``) is called the stub. ``callers``: the files of
    the frames that called the student's function in this process (``callers_of``), whose lines and source the
    text must not carry.
    """
    kind = exc.type_name if isinstance(exc, StudentRaised) else exception_type(exc)
    text = " ".join(without_grader_frames(exception_text(exc), callers).split())
    origin = getattr(exc, "origin", None) or origin
    missing = getattr(exc, "missing", None) or (getattr(exc, "name", None) if kind in NAMED else None)
    where = f" in {notebook}.ipynb" if notebook else ""
    message = helper_message(name, notebook, kind, origin, missing)
    package = not_installed(kind, missing)
    if message is None and package:
        message = (f"`{name}` imports `{package}`, which is not installed where the grader runs your code: this is "
                   "not a wrong answer, and an instructor will review it (numpy alone is graded automatically).")
    elif message is None and kind == "NotImplementedError" and not text:
        message = (f"`{name}`{where} is still the stub: it raises NotImplementedError. Replace "
                   "`raise NotImplementedError()` with your code and run the cell.")
    elif message is None and getattr(exc, "late", False) and text.startswith(LATE_WORDS):   # the worker's flag
        message = f"`{name}` did not return: no answer {text[len(LATE_WORDS):]}"
    elif message is None and getattr(exc, "late", False) and kind == "NotAsked":
        message = f"`{name}` was {text}"
    elif message is None and text == UNREADABLE:
        message = f"`{name}` raised {kind} {UNREADABLE}"
    elif message is None:
        message = f"`{name}` raised {kind}: {text}" if text else f"`{name}` raised {kind} (no message)"
    error = StudentError(_short(message), raised=kind)
    error.environment = package
    return error


NAMED = ("NameError", "ModuleNotFoundError")     # exceptions whose ``name`` says what was missing


def not_installed(kind: str, missing) -> str | None:
    """The package a ModuleNotFoundError says is not installed where the student's code runs; None for any other
    error, and for the grader's own packages, hidden from student code on purpose (an ordinary error)."""
    if kind != "ModuleNotFoundError" or type(missing) is not str or not missing:
        return None
    package = missing.partition(".")[0]
    return None if package in HIDDEN_PACKAGES else package


def note_environment(student, function: str, error) -> None:
    """A package missing from the grading environment goes on the student's ``events`` (the record's review
    findings), once per function and package."""
    package, events = getattr(error, "environment", None), getattr(student, "events", None)
    if not package or not isinstance(events, list):
        return
    notebook = getattr(student, "notebook", None)
    said = (f"`{function}`{f' in {notebook}.ipynb' if notebook else ''} imports `{package}`, which is not installed "
            f"where the grader runs student code, so its checks could not judge it: grade it by hand, or install "
            f"`{package}` in the students' environment and grade again.")
    if said not in events:
        events.append(said)


_raised = raised_error
LATE_WORDS = "did not return "      # the worker's words for a call past its time (sandbox.worker._timed)
GRADER = str(Path(importlib.util.find_spec("autograder").origin).resolve().parent)   # the grader's own code


def callers_of(frame) -> frozenset:
    """The files of ``frame`` and every frame above it: in-process, what called the student's function (the
    grader, and whatever called the grader: a test, a notebook's hidden-test cell)."""
    files = set()
    while frame is not None:
        files.add(frame.f_code.co_filename)
        frame = frame.f_back
    return frozenset(files)


def without_grader_frames(text: str, callers: frozenset = frozenset()) -> str:
    """A student's exception text with every traceback line of the grader's own code, or of the code that called
    the student's function (``callers``: its file, and the source line under it), said as ``[a grader frame]``,
    the grader's path elsewhere as ``[grader]``, and any line of the callers' source as ``[grader source]``:
    in-process, a traceback or a frame's source the student formats holds the grader's; the sandbox's worker
    shows its own frames so (its source is not readable there)."""
    paths = (GRADER, *sorted(c for c in callers if c.startswith("/") and c != GRADER))
    source = _source_lines(frozenset(callers))
    if not any(p in text for p in paths) and not any(line.strip() in source for line in text.splitlines()):
        return text
    out, skip = [], False
    for line in text.splitlines():
        frame = line.lstrip().startswith("File") and (any(p in line for p in paths)
                                                       or any(f'"{c}"' in line for c in callers))
        if frame or any(p in line for p in paths):
            out.append("[a grader frame]" if frame else _paths_hidden(line, paths))
            skip = frame
        elif skip and line.startswith("    "):
            skip = False
        else:
            out.append("[grader source]" if line.strip() in source else line)
            skip = False
    return "\n".join(out)


def _paths_hidden(line: str, paths) -> str:
    for p in paths:
        line = line.replace(p, "[grader]" if p == GRADER else "[caller]")
    return line


@functools.lru_cache(maxsize=64)
def _source_lines(callers: frozenset) -> frozenset:
    """The lines (stripped, of some length: not a bare ``try:``) of the callers' source files."""
    lines = set()
    for path in callers:
        lines.update(line.strip() for line in linecache.getlines(path) if len(line.strip()) >= 16)
    return frozenset(lines)


def missing_error(student, name: str, fn) -> StudentError | None:
    """The StudentError for a function the notebook does not define (or never reached the grader); None when
    ``fn`` is callable."""
    notebook = getattr(student, "notebook", None)
    if fn is None and getattr(student, "unread", False):       # its notebook never reached the grader
        return StudentError(f"`{name}` was not checked: {notebook}.ipynb could not be graded as it was submitted, "
                            "so this submission awaits an instructor's review.")
    if fn is None or not callable(fn):
        where = f" in {notebook}.ipynb" if notebook else ""
        return StudentError(f"`{name}` is not defined{where}: write the function `{name}` in its exercise "
                            "cell and run that cell.")
    return None


def helper_message(name: str, notebook: str | None, kind: str, origin: str | None,
                   missing: str | None) -> str | None:
    """A stub or missing *helper* (another function ``name`` calls), named with its notebook; else None."""
    nb = f"{notebook}.ipynb" if notebook else "this notebook"
    if kind == "NameError" and isinstance(missing, str) and missing in _exercise_functions():
        return (f"`{name}` in {nb} uses `{missing}`, which that notebook does not define: each notebook "
                f"runs on its own, so define `{missing}` in {nb} too.")
    if kind == "NotImplementedError" and origin and origin != name and origin.isidentifier():
        return (f"`{name}` in {nb} calls `{origin}`, which in that notebook still raises NotImplementedError: "
                f"each notebook runs on its own, so write `{origin}` in {nb} too.")
    return None


def _exercise_functions() -> frozenset[str]:
    """The assignment's functions: a missing one is a helper another notebook defines; any other missing
    name (a typo in the student's own variable) keeps Python's own message."""
    return frozenset(n for names in FUNCTIONS.values() for n in names)


def as_returned(value) -> str:
    """A short text for a value as the student returned it: ``8`` for an int, not ``array(8)``.

    (A number that came back through the sandbox arrives as a 0-d array; it is shown as the number.)
    """
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biuf":
        value = value.item()
    elif isinstance(value, np.generic) and not isinstance(value, np.ndarray):
        value = value.item()
    if isinstance(value, np.ndarray):
        with np.printoptions(precision=4, threshold=20, edgeitems=2):
            return _short(np.array2string(value, separator=", "))
    if isinstance(value, (tuple, list)):
        parts = ", ".join(as_returned(v) for v in list(value)[:4]) + (", ..." if len(value) > 4 else "")
        return f"({parts}{',' if len(value) == 1 else ''})" if isinstance(value, tuple) else f"[{parts}]"
    return _short(repr(value))


def to_array(value, what: str) -> np.ndarray:
    """A float64 copy of a numeric array-like, or a StudentError saying what was expected."""
    if value is None:
        raise StudentError(f"{what} is None: did the function forget to `return` it?")
    if isinstance(value, (str, bytes)):
        raise StudentError(f"{what} is a string; return a numeric numpy array")
    if isinstance(value, np.ndarray) and value.dtype == object:
        raise StudentError(f"{what} is an object array; return a numeric numpy array (float dtype)")
    try:        # a plain ndarray is copied once, by astype below (an answer is a fresh copy already)
        arr = value if type(value) is np.ndarray else np.array(value, copy=True, subok=False)
    except Exception as exc:  # noqa: BLE001 - ragged lists and odd objects
        raise StudentError(_short(f"{what} is not a numeric array ({type(exc).__name__}: {exc})")) from None
    if arr.dtype.kind not in "biuf":
        raise StudentError(f"{what} has dtype {arr.dtype}; return a numeric numpy array")
    out = arr.astype(np.float64)
    return out.view(HalfPrecision) if arr.dtype == np.float16 else out


def to_pair(value, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(output, weights) as two float64 arrays."""
    if value is None:
        raise StudentError(f"`{name}` returned None; it should return a pair (output, weights): did it "
                           "forget to `return` them?")
    if not isinstance(value, (tuple, list)):
        raise StudentError(f"`{name}` should return a pair (output, weights); got {a_kind(value)}, "
                           f"{as_returned(value)}")
    if len(value) != 2:
        raise StudentError(f"`{name}` should return a pair (output, weights); got {len(value)} values")
    return to_array(value[0], f"the output of `{name}`"), to_array(value[1], f"the weights of `{name}`")


def a_kind(value) -> str:
    """What kind of value it is, with its article: "an int", "a list", "a numpy array of shape (3, 4)"."""
    if isinstance(value, np.ndarray):
        return f"a numpy array of shape {value.shape}"
    kind = type(value).__name__
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}"


def to_int(value, what: str) -> int:
    """An exact integer (numpy integers and integral floats accepted)."""
    if value is None:
        raise StudentError(f"{what} is None: did the function forget to `return` its result?")
    if isinstance(value, (bool, np.bool_)):
        raise StudentError(f"{what} is {as_returned(value)}, a truth value; return a whole number")
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu":
        return int(value.item())                 # an integer through the sandbox: exact, whatever its size
    arr = to_array(value, what)
    if arr.shape != () or not np.isfinite(arr) or arr != np.round(arr):
        raise StudentError(f"{what} should be a whole number; got {as_returned(value)}")
    return int(round(float(arr)))
