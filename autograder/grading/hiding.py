"""In-process grading hides the grader from the student's code while it runs, as the sandbox does.

The sandboxed worker cannot import ``solutions`` or ``autograder``: their folders are empty mounts there
(``sandbox.allowed.HIDDEN_PACKAGES``). In-process (``grade_namespace``, the hidden-test cells) the student's
function runs in the grader's own process, where the reference engine is loaded: ``import solutions`` inside
the function, or a search of ``sys.modules`` for another module's ``causal_attention``, would hand it the
reference's answer. So for the length of each call every loaded module of those packages reads as ``None``
in ``sys.modules`` (Python's own "halted" entry: an import of it, or of anything below it, raises
ModuleNotFoundError, as in the sandbox), and the entries are put back after the call, whatever it did.

In-process grading is still not tamper-proof (DESIGN.md): code that walks the caller's frames or the
garbage collector, or that bound the reference before it was graded, can find it; the sandboxed worker is
where untrusted code is graded.
"""
from __future__ import annotations

import contextlib
import sys

from ..sandbox.allowed import HIDDEN_PACKAGES


_seen: list = [None, ()]         # (what sys.modules looked like, the hidden names then): read again when it changes


def _hidden_names() -> tuple[str, ...]:
    """The loaded modules of the hidden packages; the scan is kept until a module is added or removed (the
    number of modules and the last one added: one call of a student's function rarely changes either)."""
    shape = (len(sys.modules), next(reversed(sys.modules), None))
    if _seen[0] != shape:
        _seen[:] = [shape, tuple(n for n in list(sys.modules) if n.partition(".")[0] in HIDDEN_PACKAGES)]
    return _seen[1]


@contextlib.contextmanager
def grader_hidden():
    """The grader's packages unreachable through imports and ``sys.modules`` inside the block."""
    kept = {name: sys.modules[name] for name in _hidden_names() if name in sys.modules}
    names = tuple(kept)
    try:
        for name in names:
            sys.modules[name] = None
        yield
    finally:
        for name in _hidden_names():                # what the block added under those names goes too
            if name not in kept:
                sys.modules.pop(name, None)
        sys.modules.update(kept)
