"""Helpers for tests that drive nbgrader's own command line on a temporary copy of the course."""
from __future__ import annotations

import ast
import csv
import importlib
import inspect
from pathlib import Path

from nbgrader_fast import run_nbgrader


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


def plain_nbgrader(course: Path) -> None:
    """Take the hardened grader's execute step out of the course's config, so that `nbgrader autograde`
    runs the hidden tests in the student's kernel, as plain nbgrader does (to compare the two graders)."""
    config = course / "nbgrader_config.py"
    lines = config.read_text().splitlines(keepends=True)
    for node in reversed(ast.parse("".join(lines)).body):
        target = node.targets[0] if isinstance(node, ast.Assign) else None
        if isinstance(target, ast.Attribute) and target.attr == "autograde_preprocessors":
            del lines[node.lineno - 1:node.end_lineno]
    config.write_text("".join(lines))
    assert "autograde_preprocessors" not in config.read_text()
