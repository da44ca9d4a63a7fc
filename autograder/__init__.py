"""Rubric checks, misconception diagnosis, sandboxed execution and batch grading.

The public names load lazily, so that the sandbox's fork server can import
``autograder.sandbox`` without importing the rubric or the reference engine.
"""
from __future__ import annotations

import importlib

# The layers, lowest first: a folder (or top-level module) imports only from layers below its own, never
# from its own layer's other folders or from above (tests/house/test_import_layers.py reads this, counting the
# imports inside functions). The leaves import nothing of this package.
LAYERS = (
    ("assignment", "inert", "tolerance", "lifecycle", "durable", "journal"),   # the assignment's shape, inert
    #   text, numerical tolerances, the process lifecycle, durable writes, the journal's format
    ("course",),            # the course read once: settings, its notebooks, the view
    ("intake",),            # hostile bytes in: a submission's files and cells, checked
    ("sandbox",),           # the worker: layers, fork server, RPC
    ("misconceptions",),    # the catalogue of known-wrong variants and the diagnosis
    ("records",),           # the record of one graded submission, its file and JSON
    ("grading",),           # the grading core: rubric, checks, student proxies, seeds, fingerprint, points check
    ("gradebook",),         # nbgrader's gradebook: the writer process, lateness
    ("outputs", "textreport", "lti"),  # CSV, feedback, autograded notebooks, report, results.json; LTI grade sync
    ("run",),               # one submission in the sandbox, the batch, nbgrader's door, the local pool
    ("watch",),             # feedback on submit
    ("samples", "notebook"),    # the demo and sample class; the hidden tests' grade_cell
    ("__main__",),          # the command line
)

_EXPORTS = {
    "grade_namespace": "autograder.grading.namespace",
    "run_cell": "autograder.grading.namespace",
    "Record": "autograder.records",
    "CheckResult": "autograder.records",
    "RUBRIC": "autograder.grading.rubric",
    "max_total": "autograder.grading.rubric",
    "grade_submission": "autograder.run.hardened",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'autograder' has no attribute {name!r}")
