"""results.json in Gradescope's autograder format, one per student."""
from __future__ import annotations

from pathlib import Path

from ..gradebook.lateness import Lateness, score
from ..inert import visible
from ..records import Record, atomic_write, dumps
from .feedback import cell_label


def results_json(record: Record, late: Lateness | None = None) -> dict:
    tests = []
    for c in record.checks:
        output = c.message if not c.passed else "Passed."
        if c.diagnosis:
            output += f"\n(misconception: {c.diagnosis})"
        tests.append({"name": visible(f"{c.grade_id}: {c.check}"), "score": c.points,
                      "max_score": c.max_points, "status": "passed" if c.passed else "failed",
                      "output": visible(output), "tags": [c.category], "visibility": "visible"})
    final = score(record.total, late)
    summary = f"Total {final:g}/{record.max_total}."
    if late and late.describe():
        summary += f" Lateness: {late.describe()}."
    if record.changed_by_hand:
        given = ", ".join(f"{g} {record.cells[g].earned:g}/{record.cells[g].max}" for g in record.changed_by_hand)
        summary += f" Your grader gave {given}."
    summary += "".join(f" Comment on {nb}.ipynb, {cell_label(cell)}: {text}" for nb, cell, text in record.comments)
    if record.open_review:
        told = record.told_student()
        summary += " This submission awaits review by an instructor" + (": " + " ".join(told) if told else ".")
    return {"score": final, "output": visible(summary), "tests": tests, "visibility": "visible",
            "stdout_visibility": "hidden"}


def write_results_json(path: Path, record: Record, late: Lateness | None = None) -> None:
    atomic_write(path, dumps(results_json(record, late)))
