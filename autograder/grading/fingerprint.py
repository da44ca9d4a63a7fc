"""What graded a record, as one short hash; and whether the rubric and the source notebooks agree.

The fingerprint covers the rubric (every grade cell's checks, points and
categories, and the code of the checks), the grade cells of the course's
source notebooks (ids, points and text) and this package's version. A stored
record whose fingerprint differs was graded by something else and is
regraded by ``grade --resume``.

The points are the course's: the source notebooks' nbgrader ``points`` (which nbgrader's gradebook
and feedback read) are each cell's, shared among its checks by their weights in the rubric.
``points_disagreements`` lists, in words, where the notebooks and the rubric do not match.
"""
from __future__ import annotations

import functools
import hashlib
import inspect
import json
from importlib import metadata
from pathlib import Path

from ..assignment import NOTEBOOKS
from ..course.notebooks import grade_cells
from .rubric import RUBRIC

DISTRIBUTION = "attention-course"


@functools.lru_cache(maxsize=1)
def _version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


def rubric_signature() -> list:
    """The rubric table with the source of every module its checks live in."""
    table = [[g, i.name, i.points, i.category] for g, items in RUBRIC.items() for i in items]
    modules = sorted({inspect.getsourcefile(i.check.judge) for items in RUBRIC.values() for i in items})
    return [table, [_code_hash(m) for m in modules]]


@functools.lru_cache(maxsize=64)
def _code_hash(module_file: str) -> str:
    """The checks' code, read once per process (it is the code this process runs)."""
    return hashlib.sha256(Path(module_file).read_bytes()).hexdigest()


def fingerprint(course: Path | None, assignment: str) -> str:
    """A short hash of the rubric, the course's source grade cells and the package version."""
    return fingerprint_of(grade_cells(Path(course) / "source" / assignment) if course else {})


def fingerprint_of(source: dict) -> str:
    """The fingerprint of the rubric as it is now, with ``source``, the course's grade cells (``grade_cells``)."""
    blob = json.dumps([rubric_signature(), source, _version()], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def points_disagreements(source_dir: Path) -> list[str]:
    """Where the source notebooks' grade cells and the rubric's do not match (empty when they do): a
    notebook or a graded cell missing, a cell worth points that no check grades. Points that differ from the
    rubric's weights are the course's to set (``rubric.scaled``), not a disagreement."""
    found = grade_cells(source_dir)
    problems = []
    for notebook, grade_ids in NOTEBOOKS.items():
        cells = found.get(notebook)
        if cells is None:
            problems.append(f"{notebook}.ipynb is missing from {source_dir}")
            continue
        scored = {g: c["points"] for g, c in cells.items() if c["points"]}
        for g in grade_ids:
            if g not in cells:
                problems.append(f"{notebook}.ipynb has no grade cell {g}, which the rubric grades")
            elif not _is_points(cells[g]["points"]):
                problems.append(f"{notebook}.ipynb cell {g} has points {cells[g]['points']!r}, not a number of "
                                "points of 0 or more")
        for g in sorted(set(scored) - set(grade_ids)):
            problems.append(f"{notebook}.ipynb cell {g} is worth {scored[g]} points but the rubric has no "
                            "checks for it")
    return problems


def _is_points(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 and value == value
