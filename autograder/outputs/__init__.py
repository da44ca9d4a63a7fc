"""Everything an instructor gets from a batch: CSV, gradebook, feedback pages, results.json, report."""
from __future__ import annotations

from pathlib import Path

from ..course import load_course
from ..inert import shown
from ..records import OutputError

# The writers are imported when used: the gradebook writer process (``python -m
# autograder.outputs.gradebook_writer``) loads this package and needs none of them.


def write_outputs(out: Path, records: list[dict], *, course: Path, assignment: str,
                  gradebook_url: str | None = None, gradebook=None) -> list[str]:
    """Write every output; ``gradebook`` is a ``GradebookWriter`` started earlier (if None, one is started
    for ``gradebook_url``, by default the course's own gradebook).

    Returns what could not be written, one line each: one student's failed page never stops the others'.
    """
    from .csvout import write_grades_csv
    from .feedback import write_feedback
    from .gradebook import GradebookWriter
    from .gradescope import write_results_json
    from .report import write_report
    records = sorted(records, key=lambda r: r["student_id"])
    settings = load_course(course)
    gradebook = gradebook or GradebookWriter(gradebook_url or settings.db_url, settings, assignment)
    errors = [e for e in (_attempt("grades.csv", write_grades_csv, out / "grades.csv", records),) if e]
    for record in records:
        who = shown(record["student_id"])
        errors += [e for e in (
            _attempt(f"feedback of {who}", write_feedback, out / "feedback" / record["student_id"] / "index.html",
                     record),
            _attempt(f"results.json of {who}", write_results_json,
                     out / "results" / record["student_id"] / "results.json", record)) if e]
    errors += [e for e in (_attempt("report.html", write_report, out / "report.html", records, assignment),
                           _attempt("the gradebook", gradebook.finish, records)) if e]
    return errors


def _attempt(what: str, write, *args) -> str | None:
    """None if ``write(*args)`` worked, else one line saying what was not written and why."""
    try:
        write(*args)
    except OutputError as exc:
        return f"{what}: {exc}"
    except Exception as exc:  # noqa: BLE001 - one output's bug must not cost every other output
        return f"{what}: could not be written ({type(exc).__name__}: {exc})"
    return None
