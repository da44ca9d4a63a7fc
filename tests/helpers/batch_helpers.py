"""A small class laid out from the sample class, and readers for batch outputs."""
from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from autograder.samples import sample_class
from nbgrader_fast import run_nbgrader
from autograder.samples.synthetic import write_submission
from conftest import ROOT

SMALL = ["correct-1", "correct-einsum", "no-scaling", "mask-after-softmax", "damaged-missing-notebook",
         "hostile-exits", "crossover-off-by-one", "cross-causal-mask", "uncatalogued-scale-by-n"]


def make_class(tmp: Path, students=SMALL, custom: dict[str, dict] | None = None) -> Path:
    """A course copy whose submitted/ holds ``students`` from the sample class (plus ``custom`` ones)."""
    course = tmp / "course"
    course.mkdir(parents=True)
    shutil.copy(ROOT / "nbgrader_config.py", course)
    for part in ("source", "release"):
        shutil.copytree(ROOT / part, course / part)
    overrides = {**sample_class.students(), **(custom or {})}
    for student in [*students, *(custom or {})]:
        folder = write_submission(course / "release/ch04_attention", course / "source/ch04_attention",
                                  course / "submitted" / student / "ch04_attention", overrides[student])
        if student in sample_class.DAMAGED:
            sample_class.DAMAGED[student](folder)
    return course


def read_csv(path: Path) -> list[dict]:
    with open(path) as f:
        return list(csv.DictReader(f))


def records(out: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((out / "records").glob("*.json"))}


def gradebook_in(out: Path) -> str:
    """A gradebook URL beside a run's outputs (for tests that grade one course several times)."""
    return f"sqlite:///{out / 'gradebook.db'}"


def export_rows(course: Path, db_url: str | None = None) -> list[dict]:
    """``nbgrader export`` run in the course: its own gradebook, or ``db_url``."""
    dest = course / f"export-{abs(hash(db_url))}.csv"
    run_nbgrader(["export", *([f"--db={db_url}"] if db_url else []), f"--to={dest}", "--log-level=WARN"],
                 course, "export")
    return read_csv(dest)


def export_gradebook(course: Path, db_url: str | None = None) -> dict[str, float]:
    return {row["student_id"]: float(row["score"]) for row in export_rows(course, db_url)}
