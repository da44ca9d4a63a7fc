"""The killers of tests/run/test_memory_cap.py and tests/env/dask/test_dask_memory_cap.py: a class with
submissions that exhaust a grading process's memory, and what a run must make of them."""
from __future__ import annotations

from pathlib import Path

from batch_helpers import make_class

A = "ch04_attention"
HONEST = {"correct-1": 28, "no-scaling": 26, "honest-2": 28, "honest-3": 28}
DIED = "A grading process died twice on this submission, graded alone the second time"


def plant_killer(folder: Path, megabytes: int) -> None:
    """A markdown cell of ``megabytes`` MB of text with one astral character, first in ex1's notebook; the
    test process never holds the string (it is written a megabyte at a time)."""
    path = folder / "ex1_attention.ipynb"
    head, tail = path.read_text().split('"cells": [', 1)
    with open(path, "w") as f:
        f.write(head + '"cells": [{"cell_type": "markdown", "metadata": {}, "source": "\U0001F600')
        for _ in range(megabytes):
            f.write("a" * (1 << 20))
        f.write('"}, ' + tail)


def class_with_killers(tmp_path: Path, megabytes: int = 160, killer: dict | None = None, killers=("killer",)) -> Path:
    """The honest class and ``killers``: each plants a notebook of ``megabytes`` unless ``killer`` is the
    killers' own code."""
    custom = {s: {} for s in HONEST if s not in ("correct-1", "no-scaling")}
    course = make_class(tmp_path, ["correct-1", "no-scaling"], custom={**custom, **dict.fromkeys(killers, killer or {})})
    for name in killers if killer is None else ():
        plant_killer(course / "submitted" / name / A, megabytes)
    return course


def only_the_killer_charged(got: dict[str, dict], why: str, killer: str = "killer", honest=HONEST) -> None:
    assert {s: got[s]["total"] for s in honest} == honest
    assert not any(got[s]["needs_review"] for s in honest)
    killer = got[killer]
    assert killer["needs_review"] and any(why in line for line in killer["integrity"]), killer["integrity"]
    assert killer["total"] == 0 if why == DIED else killer["total"] < 28       # refused: ex1 alone is not graded
