"""results.json in Gradescope's autograder format, one per student."""
from __future__ import annotations

from pathlib import Path

from ..records import atomic_write, dumps


def results_json(record: dict) -> dict:
    tests = []
    for c in record["checks"]:
        output = c["message"] if not c["passed"] else "Passed."
        if c.get("diagnosis"):
            output += f"\n(misconception: {c['diagnosis']})"
        tests.append({"name": f"{c['grade_id']}: {c['check']}", "score": c["points"],
                      "max_score": c["max_points"], "status": "passed" if c["passed"] else "failed",
                      "output": output, "tags": [c["category"]], "visibility": "visible"})
    summary = f"Total {record['total']}/{record['max_total']}."
    if record.get("needs_review"):
        summary += " This submission will be reviewed by an instructor: " + " ".join(record.get("integrity", []))
    return {"score": record["total"], "output": summary, "tests": tests, "visibility": "visible",
            "stdout_visibility": "hidden"}


def write_results_json(path: Path, record: dict) -> None:
    atomic_write(path, dumps(results_json(record)))
