"""Rubric checks, misconception diagnosis, sandboxed execution and batch grading.

The public names load lazily, so that the sandbox's fork server can import
``autograder.sandbox`` without importing the rubric or the reference engine.
"""
from __future__ import annotations

import importlib

# The layers, lowest first: a folder (or top-level module) imports only from layers below its own, never
# from a sibling of its own layer or from above (tests/house/test_import_layers.py reads this, counting the
# imports inside functions). Each layer is the real level of its folders in the import graph: one above the
# highest layer it imports (the lowest import nothing of this package).
LAYERS = (
    ("assignment", "inert", "tolerance", "lifecycle", "durable", "journal"),   # the assignment's shape, inert
    #   text, numerical tolerances, the process lifecycle, durable writes, the journal's format
    ("course", "sandbox", "misconceptions", "records"),   # the course read once; the worker: layers, fork
    #   server, RPC; the catalogue of known-wrong variants and the diagnosis; the record of one graded
    #   submission, its findings, its file and JSON
    ("intake", "grading", "gradebook"),   # hostile bytes in: a submission's files and cells, checked; the
    #   grading core: rubric, checks, student proxies, seeds, fingerprint; nbgrader's gradebook: the writer
    #   process, lateness
    ("outputs", "textreport", "lti", "notebook"),   # CSV, feedback, autograded notebooks, report, results.json;
    #   LTI grade sync; the hidden tests' grade_cell
    ("run",),               # one submission in the sandbox, the batch, nbgrader's door, the local pool
    ("watch", "samples"),   # feedback on submit; the demo and sample class
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
