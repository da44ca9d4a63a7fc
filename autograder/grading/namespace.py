"""Run the rubric on a student's functions and build the result record.

A grade cell's checks call the functions of the notebook that holds the cell,
as ``nbgrader autograde`` does: each notebook runs in its own kernel, so a
``softmax`` written in one notebook is not the ``softmax`` of another.
"""
from __future__ import annotations

import contextlib
import warnings
from dataclasses import replace

import numpy as np

from ..assignment import NOTEBOOKS, notebook_of
from .verdicts import Outcome
from ..records import CheckResult, Finding, Record, check_result
from .rubric import RUBRIC
from .runner import run_checks
from .seeds import check_rng, student_seed
from .student import NotebookFunctions


def run_cell(student, grade_id: str, student_id: str = "anonymous", seed: int | None = None) -> list[CheckResult]:
    """The checks of one grade cell. ``student`` is the namespace of the notebook holding the cell
    (a dict, as the hidden-test cells pass ``globals()``) or an object with ``get(name)`` (and ``ask``, a
    sandboxed notebook). Their questions go in one batch per function (``runner.run_checks``)."""
    seed = student_seed(student_id) if seed is None else seed
    if isinstance(student, dict):
        student = NotebookFunctions(student, notebook_of(grade_id))
    items = RUBRIC[grade_id]
    outcomes = run_checks(student, [(item.check, check_rng(seed, grade_id, item.name)) for item in items])
    return [result(grade_id, item, outcome) for item, outcome in zip(items, outcomes)]


def result(grade_id: str, item, outcome: Outcome) -> CheckResult:
    """The check's result; a failed check earns the share of its points its evidenced parts earn (``credit``)."""
    out = check_result(grade_id, item, outcome)
    if not outcome.passed and outcome.credit > 0:
        out = replace(out, points=item.points * min(outcome.credit, 1.0))
    return out


@contextlib.contextmanager
def quiet():
    """The student's numpy warnings are silenced: a warning never costs points or clutters output."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def per_notebook(namespace: dict) -> dict[str, dict]:
    """notebook -> namespace: ``namespace`` itself when it maps notebook names to namespaces, else the
    same namespace for every notebook (one module or dict defining all the functions)."""
    if namespace and set(namespace) <= set(NOTEBOOKS) and all(isinstance(v, dict) for v in namespace.values()):
        return {nb: namespace.get(nb, {}) for nb in NOTEBOOKS}
    return {nb: namespace for nb in NOTEBOOKS}


def grade_namespace(namespace: dict, student_id: str = "anonymous") -> Record:
    """Grade the exercise functions a namespace defines (missing ones fail their checks).

    ``namespace`` is one dict for all notebooks, or ``{notebook: dict}`` with each notebook's own
    namespace, as nbgrader runs them; a grade cell's checks use its notebook's namespace.
    """
    seed = student_seed(student_id)
    spaces = {nb: NotebookFunctions(space, nb) for nb, space in per_notebook(namespace).items()}
    with quiet():
        checks = [r for g in RUBRIC for r in run_cell(spaces[notebook_of(g)], g, student_id, seed)]
    found = tuple(Finding(event, nb) for nb, space in spaces.items() for event in space.events)
    return Record(student_id, checks, needs_review=bool(found), findings=found)
