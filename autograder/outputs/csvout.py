"""grades.csv: one row per student, written atomically; no student text can run as a spreadsheet formula."""
from __future__ import annotations

import csv
import io
from pathlib import Path

from ..inert import csv_cell
from ..lateness import Lateness, score
from ..records import atomic_write
from ..rubric import CATEGORIES, NOTEBOOKS

# total is the score after any late penalty (nbgrader export's ``score``); the category and notebook
# columns are the points before it.
COLUMNS = ["student_id", "total", "max_total", "needs_review", "submitted", "seconds_late", "late_penalty",
           *CATEGORIES, *NOTEBOOKS, "diagnoses"]


def notebook_scores(record: dict) -> dict[str, int]:
    scores = {nb: 0 for nb in NOTEBOOKS}
    for cell in record.get("cells", {}).values():
        scores[cell["notebook"]] += cell["earned"]
    return scores


def csv_row(record: dict, late: Lateness | None = None) -> dict:
    diagnoses = sorted({c["diagnosis"] for c in record["checks"] if c.get("diagnosis")})
    late = late or Lateness()
    return {"student_id": record["student_id"], "total": f"{score(record['total'], late):g}",
            "max_total": record["max_total"], "needs_review": str(bool(record["needs_review"])).lower(),
            "submitted": late.submitted, "seconds_late": f"{late.seconds_late:g}", "late_penalty": f"{late.penalty:g}",
            **{c: record["categories"][c]["earned"] for c in CATEGORIES},
            **notebook_scores(record), "diagnoses": ";".join(diagnoses)}


def write_grades_csv(path: Path, records: list[dict], late: dict[str, Lateness] | None = None) -> None:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for record in records:
        row = csv_row(record, (late or {}).get(record["student_id"]))
        writer.writerow({k: csv_cell(v) for k, v in row.items()})   # no cell runs as a formula
    atomic_write(path, buf.getvalue())
