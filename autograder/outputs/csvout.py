"""grades.csv: one row per student, written atomically; no student text can run as a spreadsheet formula."""
from __future__ import annotations

import csv
import io
from pathlib import Path

from ..gradebook.lateness import Lateness, score
from ..inert import csv_cell, shown_id, told_apart
from ..records import OutputError, Record, atomic_write
from ..assignment import CATEGORIES, NOTEBOOKS

# total is the score after any late penalty (nbgrader export's ``score``); the category and notebook
# columns are the points before it.
COLUMNS = ["student_id", "total", "max_total", "needs_review", "submitted", "seconds_late", "late_penalty",
           *CATEGORIES, *NOTEBOOKS, "diagnoses"]


def csv_row(record: Record, late: Lateness | None = None, name: str | None = None) -> dict:
    """One row; the id as ``name`` shows it (``inert.told_apart`` among the class), else ``shown_id``."""
    late, notebooks = late or Lateness(), record.notebooks
    return {"student_id": shown_id(record.student_id) if name is None else name, "total": f"{score(record.total, late):g}",
            "max_total": record.max_total, "needs_review": str(record.open_review).lower(),
            "submitted": late.submitted, "seconds_late": "unknown" if late.unknown else f"{late.seconds_late:g}",
            "late_penalty": "unknown" if late.unknown else f"{late.penalty:g}",
            **{c: record.categories[c].earned for c in CATEGORIES},
            **{nb: notebooks[nb].earned if nb in notebooks else 0 for nb in NOTEBOOKS},
            "diagnoses": ";".join(record.diagnoses)}


def one_maximum(records: list[Record]) -> None:
    """Refuse a CSV whose rows are out of different maxima (records graded by different rubrics)."""
    maxima = sorted({r.max_total for r in records})
    if len(maxima) > 1:
        by = {m: [shown_id(r.student_id) for r in records if r.max_total == m][:5] for m in maxima}
        mixed = ", ".join(f"{m} ({', '.join(s)})" for m, s in by.items())
        raise OutputError(f"grades.csv would mix maxima {mixed}: these records were graded by different "
                          "rubrics; grade again with --resume")


def write_grades_csv(path: Path, records: list[Record], late: dict[str, Lateness] | None = None) -> None:
    one_maximum(records)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    names = told_apart(r.student_id for r in records)
    for record in records:
        row = csv_row(record, (late or {}).get(record.student_id), names[record.student_id])
        writer.writerow({k: csv_cell(v) for k, v in row.items()})   # no cell runs as a formula
    atomic_write(path, buf.getvalue())
