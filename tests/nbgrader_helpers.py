"""Helpers for tests that drive nbgrader's own command line on a temporary copy of the course."""
from __future__ import annotations

import csv
import importlib
import inspect
import shutil
from pathlib import Path

from autograder.nbgrader_cli import run_nbgrader
from autograder.submissions import write_submission
from conftest import ROOT


def fixture_overrides(name: str) -> dict[str, str]:
    """The functions a tests/fixtures/impl module writes itself, as code per function name."""
    mod = importlib.import_module(f"fixtures.impl.{name}")
    return {fn_name: inspect.getsource(fn) for fn_name, fn in vars(mod).items()
            if inspect.isfunction(fn) and fn.__module__ == mod.__name__}


def make_course(tmp: Path) -> Path:
    course = tmp / "course"
    course.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", course)
    shutil.copytree(ROOT / "source", course / "source")
    run_nbgrader(["generate_assignment", "--force", "--log-level=WARN"], course, "generate_assignment")
    return course


def add_student(course: Path, student: str, fixture: str | None) -> None:
    overrides = fixture_overrides(fixture) if fixture else {}
    write_submission(course / "release" / "ch04_attention", course / "source" / "ch04_attention",
                     course / "submitted" / student / "ch04_attention", overrides)


def autograde_and_export(course: Path) -> dict[str, float]:
    run_nbgrader(["autograde", "--force", "--log-level=WARN"], course, "autograde", timeout=900)
    run_nbgrader(["export", "--log-level=WARN"], course, "export")
    with open(course / "grades.csv") as f:
        return {row["student_id"]: float(row["score"]) for row in csv.DictReader(f)}
