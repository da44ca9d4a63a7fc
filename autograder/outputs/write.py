"""Write everything an instructor gets from a batch: CSV, gradebook, feedback pages, results.json, report."""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from ..course.settings import Course, load_course
from ..gradebook.lateness import Lateness, submission_times
from ..inert import shown
from ..records import OutputError, Record


def write_outputs(out: Path, records: list[Record], *, course: Path, assignment: str,
                  gradebook_url: str | None = None, gradebook=None, settings: Course | None = None) -> list[str]:
    """Write every output; ``gradebook`` is a ``GradebookWriter`` started earlier (if None, one is started
    for ``gradebook_url``, by default the course's own gradebook).

    The gradebook comes first: it says how late each submission was and what that cost (nbgrader's
    late penalties), which every other output shows. Returns what could not be written, one line
    each: one student's failed page never stops the others'.
    """
    from .csvout import write_grades_csv
    from ..gradebook.client import GradebookWriter
    from .report import write_report
    records = sorted(records, key=lambda r: r.student_id)
    settings = settings or load_course(course)             # a batch passes the settings it read
    gradebook = gradebook or GradebookWriter(gradebook_url or settings.db_url, settings, assignment)
    late, errors = _lateness(gradebook, records, settings.root, assignment)
    errors += [e for e in (_attempt("grades.csv", write_grades_csv, out / "grades.csv", records, late),) if e]
    delivery, secrets = [], _secrets(settings.root, assignment, records)
    for record in records:
        errors += _student_outputs(out, record, late.get(record.student_id), settings, assignment, delivery,
                                   secrets[record.student_id])
    from ..watch.summary import before_deadline
    errors += [e for e in (_attempt("report.html", write_report, out / "report.html", records, assignment,
                                    late, delivery, before_deadline(settings.root, assignment)),) if e]
    return errors


def _lateness(gradebook, records: list[Record], course: Path, assignment: str) -> tuple[dict, list[str]]:
    """Each student's Lateness: the submission time from timestamp.txt, the rest from the gradebook."""
    times = submission_times(course, assignment, [r.student_id for r in records])
    storable = [r for r in records if _is_text(r.student_id)]
    errors = [f"the gradebook: the student id {shown(r.student_id)} is not UTF-8 text, which nbgrader's "
              "gradebook cannot hold; enter this student's grade by hand" for r in records
              if not _is_text(r.student_id)]
    answer: dict = {}
    error = _attempt("the gradebook", lambda: answer.update(
        gradebook.finish(storable, {s: t.text() for s, t in times.items() if _is_text(s)}) or {}))
    late = {s: Lateness.from_gradebook(answer.get(s), t) for s, t in times.items()}
    if error:                  # no output may say "no penalty" when the gradebook could not say how late
        late = {s: replace(v, unknown="lateness unknown: the gradebook could not be updated, so no late penalty "
                           "was computed; fix the gradebook error and grade again with --resume")
                for s, v in late.items()}
    return late, errors + ([error] if error else [])


def _is_text(student_id: str) -> bool:
    """Whether the id is text: a folder name with bytes that are not UTF-8 is not, and no database holds it."""
    try:
        student_id.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _secrets(course: Path, assignment: str, records: list[Record]) -> dict[str, bytes | str]:
    """Each graded student's submission secret when nbgrader can deliver to them alone, else why not
    (a secret is compared with every submission of the class, graded in this run or not)."""
    from ..intake.secret import class_secrets, deliverable
    submitted = Path(course) / "submitted"
    try:
        everyone = {e.name for e in os.scandir(submitted)} | {r.student_id for r in records}
    except OSError:
        everyone = {r.student_id for r in records}
    return deliverable(class_secrets(submitted, assignment, sorted(everyone)))


def _student_outputs(out: Path, record: Record, late, course, assignment: str, delivery: list[str],
                     secret: bytes | str) -> list[str]:
    """One student's pages: ours, results.json and nbgrader's per-notebook feedback (``delivery`` collects
    why nbgrader cannot deliver some)."""
    from .feedback import write_feedback
    from .gradescope import write_results_json
    from .nbfeedback import write_notebook_feedback
    who, student = shown(record.student_id), record.student_id
    errors = [_attempt(f"feedback of {who}", write_feedback, out / "feedback" / student / "index.html", record, late),
              _attempt(f"results.json of {who}", write_results_json, out / "results" / student / "results.json",
                       record, late),
              _attempt(f"nbgrader feedback of {who}", lambda: delivery.extend(
                  filter(None, [write_notebook_feedback(course, assignment, record, late, secret)])))]
    return [e for e in errors if e]


def _attempt(what: str, write, *args) -> str | None:
    """None if ``write(*args)`` worked, else one line saying what was not written and why."""
    try:
        write(*args)
    except OutputError as exc:
        return f"{what}: {exc}"
    except Exception as exc:  # noqa: BLE001 - one output's bug must not cost every other output
        return f"{what}: could not be written ({type(exc).__name__}: {exc})"
    return None
