"""Helpers for tests that drive nbgrader's own command line on a temporary copy of the course."""
from __future__ import annotations

import csv
import importlib
import inspect
from pathlib import Path

from autograder.course.nbgrader_cli import run_nbgrader


def fixture_overrides(name: str) -> dict[str, str]:
    """The functions a tests/fixtures/impl module writes itself, as code per function name."""
    mod = importlib.import_module(f"fixtures.impl.{name}")
    return {fn_name: inspect.getsource(fn) for fn_name, fn in vars(mod).items()
            if inspect.isfunction(fn) and fn.__module__ == mod.__name__}


def autograde_and_export(course: Path) -> dict[str, float]:
    run_nbgrader(["autograde", "ch04_attention", "--force", "--log-level=WARN"], course, "autograde", timeout=900)
    run_nbgrader(["export", "--log-level=WARN"], course, "export")
    with open(course / "grades.csv") as f:
        return {row["student_id"]: float(row["score"]) for row in csv.DictReader(f)}
