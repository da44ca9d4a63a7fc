"""grades.csv: one row per student, written atomically; no student text can run as a spreadsheet formula."""
from __future__ import annotations

import csv
import io
from pathlib import Path

from ..inert import csv_cell
from ..records import atomic_write
from ..rubric import CATEGORIES, NOTEBOOKS

COLUMNS = ["student_id", "total", "max_total", "needs_review", *CATEGORIES, *NOTEBOOKS, "diagnoses"]


def notebook_scores(record: dict) -> dict[str, int]:
    scores = {nb: 0 for nb in NOTEBOOKS}
    for cell in record.get("cells", {}).values():
        scores[cell["notebook"]] += cell["earned"]
    return scores


def csv_row(record: dict) -> dict:
    diagnoses = sorted({c["diagnosis"] for c in record["checks"] if c.get("diagnosis")})
    return {"student_id": record["student_id"], "total": record["total"], "max_total": record["max_total"],
            "needs_review": str(bool(record["needs_review"])).lower(),
            **{c: record["categories"][c]["earned"] for c in CATEGORIES},
            **notebook_scores(record), "diagnoses": ";".join(diagnoses)}


def write_grades_csv(path: Path, records: list[dict]) -> None:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({k: csv_cell(v) for k, v in csv_row(record).items()})   # no cell runs as a formula
    atomic_write(path, buf.getvalue())
