"""Run the rubric on a student's functions and assemble the result record."""
from __future__ import annotations

import traceback
import warnings

import numpy as np

from .checks._base import Outcome
from .rubric import CATEGORIES, RUBRIC, cell_max, notebook_of
from .seeds import check_rng, student_seed
from .student import StudentError

INTERNAL = "The grader could not run this check (an internal error); an instructor will review it."


def run_item(student, grade_id: str, item, seed: int) -> dict:
    """One check -> one result dict; never raises."""
    try:
        outcome = item.check(student, check_rng(seed, grade_id, item.name))
    except StudentError as exc:
        outcome = Outcome(False, str(exc), diagnosis=exc.diagnosis)
    except Exception:  # noqa: BLE001 - a grader bug must not cost the student or stop the batch
        outcome = Outcome(False, INTERNAL, details={"internal_error": traceback.format_exc(limit=3)})
    return {
        "grade_id": grade_id, "check": item.name, "category": item.category,
        "points": item.points if outcome.passed else 0, "max_points": item.points,
        "passed": outcome.passed, "diagnosis": outcome.diagnosis, "stage": outcome.stage,
        "message": outcome.message,
        "details": outcome.details,
    }


def run_cell(student, grade_id: str, student_id: str = "anonymous", seed: int | None = None) -> list[dict]:
    seed = student_seed(student_id) if seed is None else seed
    return [run_item(student, grade_id, item, seed) for item in RUBRIC[grade_id]]


def build_record(student_id: str, checks: list[dict], integrity=(), needs_review=False) -> dict:
    """The record shared by the in-process API and the hardened grader."""
    categories = {c: {"earned": 0, "max": 0} for c in CATEGORIES}
    cells: dict[str, dict] = {}
    for r in checks:
        categories[r["category"]]["earned"] += r["points"]
        categories[r["category"]]["max"] += r["max_points"]
        cell = cells.setdefault(r["grade_id"], {"earned": 0, "max": cell_max(r["grade_id"]),
                                                "notebook": notebook_of(r["grade_id"])})
        cell["earned"] += r["points"]
    internal = any(r["message"] == INTERNAL for r in checks)
    return {
        "student_id": student_id,
        "total": sum(r["points"] for r in checks),
        "max_total": sum(cell_max(g) for g in RUBRIC),
        "categories": categories,
        "cells": cells,
        "checks": checks,
        "needs_review": bool(needs_review or internal),
        "integrity": list(integrity),
    }


def grade_namespace(namespace: dict, student_id: str = "anonymous") -> dict:
    """Grade whatever exercise functions ``namespace`` defines (missing ones fail their checks).

    The student's numpy warnings are silenced: a warning never costs points or clutters output.
    """
    seed = student_seed(student_id)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        checks = [r for grade_id in RUBRIC for r in run_cell(namespace, grade_id, student_id, seed)]
    return build_record(student_id, checks)
