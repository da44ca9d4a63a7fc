"""Intake: read a submission's notebooks, keep the student's code, report damage.

Test cells are never taken from the submission: the grader's checks come from
the rubric and the course's own source/release. Damage (unreadable files,
edited or deleted test cells, changed points, extra grade cells, oversized
notebooks) is described in plain words and marks the submission for review;
whatever code can still be recovered is graded.
"""
from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

MAX_NOTEBOOK_BYTES = 50 << 20        # larger notebooks are flagged (outputs are not needed)
HARD_LIMIT_BYTES = 512 << 20         # larger ones are not parsed at all
_SOURCE_RE = re.compile(r'"source"\s*:\s*(\[(?:\s*"(?:[^"\\]|\\.)*"\s*,?)*\s*\]|"(?:[^"\\]|\\.)*")', re.S)


@dataclass
class CodeCell:
    notebook: str
    index: int
    source: str


@dataclass
class Intake:
    cells: list[CodeCell] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    needs_review: bool = False

    def damage(self, message: str) -> None:
        self.problems.append(message)
        self.needs_review = True


@dataclass(frozen=True)
class TestCell:
    grade_id: str
    text: str            # what the student should see (release version)
    meta: tuple          # (grade, solution, locked, points)


def _nbg(cell) -> dict:
    meta = cell.get("metadata", {}) if isinstance(cell, dict) else {}
    nbg = meta.get("nbgrader", {}) if isinstance(meta, dict) else {}
    return nbg if isinstance(nbg, dict) else {}


def _flags(nbg: dict) -> tuple:
    return (bool(nbg.get("grade")), bool(nbg.get("solution")), bool(nbg.get("locked")), nbg.get("points"))


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in str(text).strip().splitlines())


def expected_cells(source_nb: Path, release_nb: Path | None) -> dict[str, TestCell]:
    """grade_id -> the locked/graded cells a submission must keep unchanged (cached per file version)."""
    key = tuple((str(p), p.stat().st_mtime_ns) for p in (source_nb, release_nb) if p and p.exists())
    return _expected_cells(source_nb, release_nb, key)


@functools.lru_cache(maxsize=32)
def _expected_cells(source_nb: Path, release_nb: Path | None, key: tuple) -> dict[str, TestCell]:
    shown = {}
    if release_nb and release_nb.exists():
        shown = {_nbg(c).get("grade_id"): _text(c) for c in _cells_of(release_nb)}
    out = {}
    for cell in _cells_of(source_nb):
        nbg = _nbg(cell)
        if nbg.get("grade_id") and (nbg.get("grade") or nbg.get("solution") or nbg.get("locked")):
            out[nbg["grade_id"]] = TestCell(nbg["grade_id"], shown.get(nbg["grade_id"], _text(cell)), _flags(nbg))
    return out


def _cells_of(path: Path) -> list[dict]:
    """The course's own notebooks (trusted, nbformat 4 JSON)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))["cells"]


def _text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def read_notebook(path: Path, name: str, intake: Intake) -> dict | None:
    """The notebook as a v4 dict, or None; damage is recorded on ``intake``."""
    if not path.exists():
        intake.damage(f"{name}.ipynb is missing from the submission; its functions could not be graded.")
        return None
    size = path.stat().st_size
    if size > HARD_LIMIT_BYTES:
        intake.damage(f"{name}.ipynb is {size / 1e6:.0f} MB, too large to read; clear its outputs and resubmit.")
        return None
    if size > MAX_NOTEBOOK_BYTES:
        intake.damage(f"{name}.ipynb is {size / 1e6:.0f} MB (limit {MAX_NOTEBOOK_BYTES >> 20} MB), "
                      "mostly outputs; the outputs were ignored and the code graded.")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        intake.damage(f"{name}.ipynb contains bytes that are not UTF-8 (at byte {exc.start}); they were "
                      "replaced and the rest graded.")
        text = raw.decode("utf-8", "replace")
    return _parse(text, name, intake)


def _parse(text: str, name: str, intake: Intake) -> dict | None:
    try:
        data = json.loads(text)
    except ValueError as exc:
        sources = _salvage(text)
        intake.damage(f"{name}.ipynb is not valid JSON ({exc}); code was recovered from {len(sources)} "
                      "cell(s) and graded.")
        return {"nbformat": 4, "salvaged": True,
                "cells": [{"cell_type": "code", "source": s, "metadata": {}} for s in sources]}
    if not isinstance(data, dict):
        intake.damage(f"{name}.ipynb is not a notebook (its JSON is not an object).")
        return None
    major = data.get("nbformat")
    if major != 4:
        intake.damage(f"{name}.ipynb uses nbformat {major}; it was converted to version 4 and graded.")
        try:
            import nbformat                                    # only old notebooks need it
            data = nbformat.reads(json.dumps(data), as_version=4)
        except Exception as exc:  # noqa: BLE001 - any conversion failure
            intake.damage(f"{name}.ipynb could not be converted ({type(exc).__name__}).")
            return None
    return data


def _salvage(text: str) -> list[str]:
    out = []
    for match in _SOURCE_RE.finditer(text):
        try:
            value = json.loads(match.group(1))
        except ValueError:
            continue
        out.append("".join(value) if isinstance(value, list) else str(value))
    return out


def collect_cells(nb: dict, name: str, expected: dict[str, TestCell], intake: Intake) -> None:
    """Student code cells in order; test and read-only cells compared with the course's versions."""
    seen = set()
    locked_texts = {_norm(t.text) for t in expected.values() if not t.meta[1]}
    for index, cell in enumerate(nb.get("cells", []) if isinstance(nb.get("cells"), list) else []):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = _text(cell)
        nbg = _nbg(cell)
        gid = nbg.get("grade_id")
        if gid in expected:
            seen.add(gid)
            _compare(expected[gid], source, nbg, name, intake)
            if not expected[gid].meta[1] and expected[gid].meta[2]:
                continue                                   # test or read-only cell: never run
        elif nbg.get("grade") and not nbg.get("solution"):
            intake.damage(f"{name}.ipynb has an extra grade cell '{str(gid)[:60]}' that is not in the "
                          "assignment; it was not run.")
            continue
        elif _norm(source) in locked_texts:
            continue                                       # a test cell without its metadata
        intake.cells.append(CodeCell(name, index, source))
    if nb.get("salvaged"):
        return                                             # cell metadata was lost with the JSON
    for gid in sorted(set(expected) - seen):
        kind = "test" if expected[gid].meta[0] else "exercise" if expected[gid].meta[1] else "read-only"
        intake.damage(f"{name}.ipynb: the {kind} cell '{gid}' was deleted.")


def _compare(want: TestCell, source: str, nbg: dict, name: str, intake: Intake) -> None:
    if _flags(nbg) != want.meta:
        intake.damage(f"{name}.ipynb: the nbgrader settings of cell '{want.grade_id}' were changed "
                      f"(points or grade flags); the assignment's settings were used.")
    if not want.meta[1] and _norm(source) != _norm(want.text):
        intake.damage(f"{name}.ipynb: the locked cell '{want.grade_id}' was edited; the grader ran its own "
                      "tests instead.")
