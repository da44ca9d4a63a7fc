"""Rubric checks, misconception diagnosis, sandboxed execution and batch grading.

The public names load lazily, so that the sandbox's fork server can import
``autograder.sandbox`` without importing the rubric or the reference engine.
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "grade_namespace": "autograder.grading",
    "run_cell": "autograder.grading",
    "Record": "autograder.records",
    "CheckResult": "autograder.records",
    "RUBRIC": "autograder.rubric",
    "max_total": "autograder.rubric",
    "grade_submission": "autograder.run.hardened",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'autograder' has no attribute {name!r}")
