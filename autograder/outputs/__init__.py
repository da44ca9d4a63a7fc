"""Everything an instructor gets from a batch: CSV, gradebook, feedback pages, results.json, report."""
from __future__ import annotations

from pathlib import Path

from .csvout import write_grades_csv
from .feedback import write_feedback
from .gradebook import GradebookWriter
from .gradescope import write_results_json
from .report import write_report


def gradebook_url_for(out: Path, url: str | None = None) -> str:
    return url or f"sqlite:///{Path(out) / 'gradebook.db'}"


def write_outputs(out: Path, records: list[dict], *, course: Path, assignment: str,
                  gradebook_url: str | None = None, gradebook: GradebookWriter | None = None) -> None:
    """Write every output; ``gradebook`` is a writer started earlier (one is started if None)."""
    records = sorted(records, key=lambda r: r["student_id"])
    gradebook = gradebook or GradebookWriter(gradebook_url_for(out, gradebook_url), course, assignment)
    write_grades_csv(out / "grades.csv", records)
    for record in records:
        write_feedback(out / "feedback" / record["student_id"] / "index.html", record)
        write_results_json(out / "results" / record["student_id"] / "results.json", record)
    write_report(out / "report.html", records, assignment)
    gradebook.finish(records)
