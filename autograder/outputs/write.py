"""Write everything an instructor gets from a batch: CSV, gradebook, feedback pages, results.json, report."""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..course.settings import Course
from ..gradebook.lateness import Lateness, submission_times
from ..gradebook.messages import Answer
from ..inert import shown
from ..records import Finding, OutputError, Record
from .csvout import write_grades_csv
from ..gradebook.client import GradebookWriter
from ..journal.summary import before_deadline
from . import feedback
from .gradescope import write_results_json


@dataclass
class Written:
    """What ``write_outputs`` wrote: the records as every output shows them (with what a person set in
    the gradebook), each student's lateness, and what could not be written (one line each)."""
    records: list[Record]
    late: dict[str, Lateness]
    errors: list[str]
    notes: list[str] = field(default_factory=list)


def write_outputs(out: Path, records: list[Record], *, settings: Course, assignment: str,
                  gradebook_url: str | None = None, gradebook=None, fresh=None) -> Written:
    """Write every output of the course ``settings`` (as the run read them); ``gradebook`` is a
    ``GradebookWriter`` started earlier (if None, one is started for ``gradebook_url``, by default the
    course's own gradebook); ``fresh``: the students graded by this run (default all), the only ones whose
    cells may be flagged for manual grading again.

    The gradebook comes first: it says how late each submission was and what that cost (nbgrader's
    late penalties), and what a person graded there (formgrader's manual scores and comments), which
    every other output shows. One student's failed page never stops the others'.
    """
    from .report import write_report  # (the report's plots load numpy: only when outputs are written)
    records = sorted(records, key=lambda r: r.student_id)
    gradebook = gradebook or GradebookWriter(gradebook_url or settings.db_url, settings, assignment)
    late, answer, errors, failed = _lateness(gradebook, records, settings.root, assignment, fresh)
    if failed and (out / "grades.csv").exists():         # not one student's refused rows: the gradebook's failure
        return Written(records, late, [*errors, KEPT])
    records = [with_manual_work(r, answer.get(r.student_id)) for r in records]
    errors += [e for e in (_attempt("grades.csv", write_grades_csv, out / "grades.csv", records, late),) if e]
    delivery, secrets = [], _secrets(settings.root, assignment, records)
    if records and all(v is None for v in secrets.values()):
        delivery.append(no_exchange(assignment))
    for record in records:
        errors += _student_outputs(out, record, late.get(record.student_id), settings, assignment, delivery,
                                   secrets[record.student_id])
    errors += [e for e in (_attempt("report.html", write_report, out / "report.html", records, assignment,
                                    late, delivery, before_deadline(settings.root, assignment)),) if e]
    said = [no_exchange(assignment)] if no_exchange(assignment) in delivery else []
    return Written(records, late, errors, disagreements(records, answer) + said)


def no_exchange(assignment: str) -> str:
    """Said in the report and on the terminal (where `init`'s list of commands ends with release_feedback, which
    stops with nbgrader's FileNotFoundError traceback for a class copied into submitted/ by hand)."""
    return (f"no submission has a submission_secret.txt (the class was collected without nbgrader's exchange), so "
            f"each student's pages are in feedback/<student>/{assignment}/ as nbgrader generate_feedback writes them, "
            "for you to hand out: nbgrader release_feedback needs the exchange and stops with FileNotFoundError")


def disagreements(records: list[Record], answer: dict[str, Answer]) -> list[str]:
    """One line per student whose gradebook held other automatic scores than the record it was not regraded
    from (``grade --resume``): the record's were written back, and the instructor is told which and why."""
    notes = []
    for r in records:
        differed = answer[r.student_id].differed if r.student_id in answer else {}
        if differed:
            cells = ", ".join(f"{g} {old:g} (the record: {r.auto_cells[g].earned:g})" if g in r.auto_cells
                              else f"{g} {old:g}" for g, old in sorted(differed.items()))
            notes.append(f"the gradebook held other automatic scores for {shown(r.student_id)} than its record: {cells}; "
                         "another grading of the same submission wrote them (nbgrader's own autograde, the Autograde "
                         "button), so the record's scores were written back and grades.csv, the pages and nbgrader "
                         "export agree again")
    return notes


GRADEBOOK = "the gradebook: "
KEPT = ("grades.csv, the feedback pages, results.json and the report of the earlier run are kept, not rewritten: they "
        "show what a person set in the gradebook (manual scores, comments, late penalties), which this run could not "
        "read, and would lose it; fix the gradebook, then run grade --resume")


def manual_work_on_resubmissions(records: list[Record], resubmitted) -> list[str]:
    """One line per student in ``resubmitted`` (whose submission changed since it was graded) with cells
    a person scored: that score is kept and still counts on the new work (a person's work is never
    overwritten), and a comment is still shown, so the instructor is told to look again."""
    notes = []
    for r in records:
        if r.student_id not in resubmitted or not r.manual_cells:
            continue
        cells = ", ".join(f"{g} ({r.cells[g].earned:g} by hand; the checks now give {r.auto_cells[g].earned:g} "
                          f"of {r.auto_cells[g].max:g})" for g in r.manual_cells)
        notes.append(f"{shown(r.student_id)} resubmitted after a person scored {cells}: the score given by hand "
                     "still counts on the new work, and its comment is still shown; the cell is flagged for you: "
                     "look at it again in formgrader")
    return notes


LOOK_AGAIN = ("a cell a person scored waits for them again in the gradebook (the work changed since it was "
              "scored)")


def with_manual_work(record: Record, answer: Answer | None) -> Record:
    """The record as the gradebook shows it: a person's scores and comments, and whether the cells
    flagged for review are all graded by hand (unchanged when the gradebook said nothing)."""
    if answer is None or answer.manual is None:
        return record
    manual = {g: v for g, v in answer.manual.items() if g in record.auto_cells}
    done = bool(manual) and not answer.needs_manual_grade                  # a person graded, none left
    again = bool(manual) and answer.needs_manual_grade and not record.needs_review
    return replace(record, manual=manual, comments=list(answer.comments), reviewed=record.needs_review and done,
                   needs_review=record.needs_review or again,             # as formgrader counts it
                   findings=(*record.findings, *((Finding(LOOK_AGAIN),) if again else ())))


def _lateness(gradebook, records: list[Record], course: Path, assignment: str,
              fresh=None) -> tuple[dict, dict, list[str], bool]:
    """Each student's Lateness (the submission time from timestamp.txt, the rest from the gradebook)
    the gradebook's whole answer per student, the errors (each refused student's, then the gradebook's failure)
    and whether the gradebook failed as a whole."""
    times = submission_times(course, assignment, [r.student_id for r in records])
    answer: dict = {}
    error = _attempt(GRADEBOOK[:-2], lambda: answer.update(
        gradebook.finish(records, {s: t.text() for s, t in times.items()}, fresh) or {}))
    refused = {s: a.refused for s, a in answer.items() if a.refused}      # only these students' rows failed
    late = {s: Lateness.from_gradebook(answer.get(s), t) for s, t in times.items()}
    if error or refused:       # no output may say "no penalty" when the gradebook could not say how late
        late = {s: replace(v, unknown="lateness unknown: the gradebook could not be updated, so no late penalty "
                           "was computed; fix the gradebook error and grade again with --resume")
                if error or s in refused else v for s, v in late.items()}
    return late, answer, [GRADEBOOK + why for why in refused.values()] + ([error] if error else []), bool(error)


def _secrets(course: Path, assignment: str, records: list[Record]) -> dict[str, bytes | str | None]:
    """Each graded student's submission secret when nbgrader can deliver to them alone, else why not
    (a secret is compared with every submission of the class, graded in this run or not); None for every
    student of a class collected without nbgrader's exchange (no submission has a secret)."""
    from ..intake.secret import class_secrets, deliverable, without_exchange  # (intake: numpy)
    submitted = Path(course) / "submitted"
    try:
        everyone = {e.name for e in os.scandir(submitted)} | {r.student_id for r in records}
    except OSError:
        everyone = {r.student_id for r in records}
    secrets = class_secrets(submitted, assignment, sorted(everyone))
    return dict.fromkeys(secrets) if without_exchange(secrets) else deliverable(secrets)


def _student_outputs(out: Path, record: Record, late, course, assignment: str, delivery: list[str],
                     secret: bytes | str | None) -> list[str]:
    """One student's pages: ours, results.json and nbgrader's per-notebook feedback (``delivery`` collects
    why nbgrader cannot deliver some)."""
    from .nbfeedback import write_notebook_feedback  # (intake: numpy, when pages are written)
    who, student = shown(record.student_id), record.student_id
    errors = [_attempt(f"feedback of {who}", feedback.write_feedback, out / "feedback" / student / "index.html", record, late),
              _attempt(f"results.json of {who}", write_results_json, out / "results" / student / "results.json",
                       record, late),
              _attempt(f"nbgrader feedback of {who}", lambda: delivery.extend(
                  write_notebook_feedback(course, assignment, record, late, secret)))]
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
