"""A sandbox layer's status as one small type, and the one name of each layer.

A worker reports each layer it put on (``layers.apply_all``) and ``doctor`` what this machine offers
(``layers.detect``), both as ``LayerStatus`` values: the code decides on their ``state``, never on their
text. What records, the terminal and the pages show is ``str(status)``, the text they always showed:
``applied``, ``applied (ABI 7)``, ``kept (not root); the capabilities of its user namespace dropped``,
``missing: no user namespace``, ``not needed: root``. ``parse`` reads that text back.

``SANDBOX_LAYERS`` names each layer once: the key of a record's ``sandbox`` map (and of ``detect``), with
the line ``doctor`` prints for it, in ``doctor``'s order.
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass


class State(enum.Enum):
    APPLIED = "applied"          # on, in this worker
    AVAILABLE = "available"      # this machine offers it (``doctor``)
    KEPT = "kept"                # left as it was, on purpose (a grader that is not root keeps its uid)
    MISSING = "missing"          # not on: the detail says why
    NOT_NEEDED = "not needed"    # the grader has what the layer would give (root needs no user namespace)


_WHY = (State.MISSING, State.NOT_NEEDED)          # written "missing: why"; the others "applied (detail)"
_WITH_DETAIL = re.compile(r"(applied|available|kept)(?: \((.*)\))?(?:; (.*))?", re.DOTALL)


@dataclass(frozen=True)
class LayerStatus:
    state: State
    detail: str = ""       # what it applied, or why it is missing
    then: str = ""         # what was done besides ("kept (not root); the capabilities ... dropped")

    def __post_init__(self) -> None:
        if self.then and self.state in _WHY:
            raise ValueError(f"a {self.state.value} status has its reason only, not {self.then!r} besides")

    def __str__(self) -> str:
        if self.state in _WHY:
            return f"{self.state.value}: {self.detail}" if self.detail else self.state.value
        text = f"{self.state.value} ({self.detail})" if self.detail else self.state.value
        return f"{text}; {self.then}" if self.then else text

    @classmethod
    def parse(cls, text: str) -> LayerStatus:
        """The status ``str`` wrote as ``text``; ValueError for text that is no status."""
        for state in _WHY:
            if text == state.value or text.startswith(state.value + ": "):
                return cls(state, text[len(state.value) + 2:])
        match = _WITH_DETAIL.fullmatch(text)
        if not match:
            raise ValueError(f"not a sandbox layer's status: {text!r}")
        return cls(State(match[1]), match[2] or "", match[3] or "")


def applied(detail: str = "", then: str = "") -> LayerStatus:
    return LayerStatus(State.APPLIED, detail, then)


def available(detail: str = "") -> LayerStatus:
    return LayerStatus(State.AVAILABLE, detail)


def missing(why: str = "") -> LayerStatus:
    return LayerStatus(State.MISSING, why)


def texts(statuses: dict[str, LayerStatus]) -> dict[str, str]:
    """Layer -> the text records and the terminal show (what a worker sends the grader)."""
    return {name: str(status) for name, status in statuses.items()}


SANDBOX_LAYERS = {
    "session": "session and process group",
    "wall-clock limits": "wall-clock limits (cell, call, submission)",
    "rlimits": "rlimits (CPU, address space, file size, open files, processes)",
    "uid": "rlimits locked (root dropped)",
    "BLAS threads": "BLAS threads pinned to 1",
    "working folder": "fresh working directory",
    "environment": "scrubbed environment",
    "landlock": "landlock",
    "this package hidden": "this package hidden (empty read-only mount over solutions, autograder, course files)",
    "seccomp": "seccomp (no execve, keyrings, System V IPC, Unix sockets, namespaces, file watching)",
    "user namespace": "user namespace (for a grader that is not root)",
    "network namespace": "network namespace",
    "IPC namespace": "IPC namespace",
    "mount namespace": "mount namespace",
    "own root": "a root of its own (Python, system libraries, its folder: nothing else to stat or watch)",
    "PID namespace": "PID namespace",
    "private /tmp": "private /tmp and /dev/shm (size-capped tmpfs)",
    "python for any uid": "unprivileged uid (Python bound read-only where its folder is private)",
    "cgroup": "cgroup pids and memory",
}


def doctor_lines(statuses: dict[str, LayerStatus]) -> dict[str, str]:
    """What ``doctor`` prints: each layer's line -> its status's text."""
    return {SANDBOX_LAYERS[name]: str(status) for name, status in statuses.items()}


def offered(statuses: dict[str, LayerStatus]) -> list[str]:
    """The ``doctor`` lines of the layers this machine offers (what the benchmarks print)."""
    return [SANDBOX_LAYERS[name] for name, status in statuses.items() if status.state is State.AVAILABLE]
