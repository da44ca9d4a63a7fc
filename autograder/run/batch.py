"""Grade a whole class: parallel, resumable, one bad submission never stops the batch.

The batch builds one job per submission (``job.student_job``) and drains an executor
(``run.executors``): forked grading processes of its own (one for a small class),
or a Dask distributed cluster; the run's own process only collects the records,
so no submission can end it. Every finished record is written
atomically at once, so a killed batch resumes where it stopped. A run holds
its output folder's lock from start to end; every process it starts ends
with it (see ``autograder.lifecycle``). Who handed in is for ``course.submissions`` to say.
"""
from __future__ import annotations

import os
import secrets
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..grading.chapter import check_chapter, check_points
from ..course.settings import CONFIG, Course, choose_assignment, resolve_db_url, unusable_settings
from ..course.submissions import discover, stray_entries, without_assignment
from ..course.view import CourseView, course_settings, read_course
from ..gradebook.client import GradebookWriter
from ..gradebook.latepenalties import check_plugin
from ..gradebook.runlock import RunLocks
from ..gradebook.url import check_course_gradebook, check_gradebook_url
from ..grading.fingerprint import fingerprint_of
from ..inert import shown
from ..intake.expected import notebooks_of
from ..records import OutputError, Record, check_record_names, graded_but_gone, read_record, synced_at_end, write_record
from .dask import DaskCluster, SchedulerLost, dask_key
from .executors import drain
from .local_pool import LocalPool
from .job import Job, current_submission, failed_record, student_job  # noqa: F401 - re-exported: tests use them
from ..lifecycle import Stop, critical
from .progress import Progress
from ..outputs.write import manual_work_on_resubmissions, write_outputs
from ..outputs.wholefolder import remove_stages
from ..gradebook.lateness import submission_times

SMALL_CLASS = 30       # up to this many submissions are graded by one grading process (see default_workers)


def default_workers(submissions: int) -> int:
    """Grading processes when none are asked for: one for a small class, else one per core. Each
    process of a pool has its own fork server, whose start costs about a second of CPU, and gains
    about 50 ms per submission on 2 cores (README, Performance): below ``SMALL_CLASS`` submissions
    one process, started at once, finishes first."""
    return 1 if submissions <= SMALL_CLASS else os.cpu_count() or 1


@dataclass
class BatchResult:
    out: Path
    records: list[Record] = field(default_factory=list)
    graded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)     # outputs that could not be written (one line each)
    notes: list[str] = field(default_factory=list)
    regraded: list[str] = field(default_factory=list)   # records graded by an older rubric, notebooks or version
    changed: list[str] = field(default_factory=list)    # submissions changed since their record (resubmitted)
    restored: list[str] = field(default_factory=list)   # autograded notebooks gone since their record (restored)
    late: dict = field(default_factory=dict)           # student -> Lateness, as the outputs show it
    kept: list[str] = field(default_factory=list)       # with --student: the others, from their records


class BatchStopped(Stop):
    """A signal stopped the batch: ``done`` of ``total`` records are complete in ``out``."""

    def __init__(self, signum: int, *, out: Path, done: int, total: int):
        super().__init__(signum)
        self.out, self.done, self.total = out, done, total


def grade_batch(*, course=".", assignment: str | None = None, out=None, workers: int | None = None,
                resume: bool = False, scheduler: str | None = None, students=None, limits: dict | None = None,
                progress: bool = True, outputs: bool = True, gradebook_url: str | None = None,
                create_gradebook: bool = False) -> BatchResult:
    """Grade ``course/submitted/*/<assignment>`` (default: the course's only assignment) into ``out``
    (default ``course/grading``); scores go to the course's gradebook unless ``gradebook_url`` is given
    (a SQLite file that must exist unless ``create_gradebook``). With ``students``, only those are
    graded, and every class output is written from all current records."""
    settings = course_settings(course)
    problems = unusable_settings(settings, gradebook_given=bool(gradebook_url) or not outputs)
    if problems:
        raise ValueError("nbgrader_config.py: " + "; ".join(problems))
    course, assignment = settings.root, choose_assignment(settings.root, assignment)
    out = Path(out).resolve() if out else course / "grading"
    everyone = discover(course, assignment)
    check_record_names(everyone)                                # one id, one record file: never an overwrite
    chosen = discover(course, assignment, students) if students else everyone
    plan = _Plan(settings, course, assignment, out, everyone, chosen, resume=resume, limits=limits,
                 progress=progress, outputs=outputs, gradebook_url=gradebook_url, create_gradebook=create_gradebook)
    # first: its processes start their fork servers (about a second) while the run checks the course
    executor = None if scheduler else LocalPool(workers or default_workers(len(chosen)), planned=True).start()
    try:
        return _grade_batch(plan, executor, scheduler)
    finally:
        if executor is not None:
            executor.close()


@dataclass(frozen=True)
class _Plan:
    """What a batch was asked to do, once its course and class are known."""
    settings: Course
    course: Path
    assignment: str
    out: Path
    everyone: list
    chosen: list
    resume: bool
    limits: dict | None
    progress: bool
    outputs: bool
    gradebook_url: str | None
    create_gradebook: bool


def _grade_batch(plan: _Plan, executor, scheduler: str | None) -> BatchResult:
    """The batch once its executor is starting: the course checked, then graded, then its outputs written."""
    out, assignment = plan.out, plan.assignment
    view, current, db_url = _checked(plan)
    # every file is renamed into place whole; the disk is waited for once, when the run ends
    with _counting_on_stop(out, plan.chosen, assignment, current), RunLocks(out, db_url) as locks, synced_at_end():
        own = bool(plan.outputs) and db_url == plan.settings.db_url     # autograded/ is this gradebook's
        result = _plan(out, view, plan.chosen, current, plan.resume, own)
        result.notes += [*plan.settings.notes, *stray_entries(plan.course / "submitted"),
                         *without_assignment(plan.course / "submitted", assignment)]
        kept = [r for s in result.skipped if (r := read_record(out, s, assignment, current))]
        bar = Progress(len(plan.chosen), done=len(result.skipped), enabled=plan.progress,
                       failed=sum(r.needs_review for r in kept))      # as the summary counts them
        # nbgrader loads slowly: its writer starts now and works while the batch is graded
        gradebook = GradebookWriter(db_url, plan.settings, assignment, locks) if plan.outputs else None
        jobs = []
        try:
            executor = executor or DaskCluster(scheduler, key=dask_key)      # once the course is known to grade
            executor.inherited = (*locks.fds, *(gradebook.fds() if gradebook else ()))
            jobs = _jobs(plan, view, result.graded, db_url)
            drain(executor, jobs, lambda job, graded: _finish(out, graded.record, bar=bar, errors=result.errors,
                                                              gradebook=gradebook, course=plan.course,
                                                              assignment=assignment, changed=result.changed))
            executor.close()                     # its processes end now, while the outputs are written
            _collect(plan, view, current, result, gradebook)
        except BaseException:
            if executor is not None:
                executor.close()                 # its processes are killed, perhaps while writing:
                _remove_stages(jobs)             # what they left half-written goes
            if gradebook:
                gradebook.abandon()
            raise
        finally:
            bar.close()                          # what follows (a message, say) starts on its own line
    return result


def _checked(plan: _Plan) -> tuple[CourseView, str, str | None]:
    """The course read once for the whole run and checked (a course that cannot grade stops here, once):
    its view, the fingerprint of what grades it, and the gradebook the run writes (None: none)."""
    view = read_course(plan.course, plan.assignment)
    check_chapter(plan.course, plan.assignment)
    notebooks_of(view)
    check_points(view)
    if plan.outputs:
        check_plugin(view.course)                               # a late plugin that cannot load stops us now
    db_url = _gradebook_url(plan.settings, plan.gradebook_url) if plan.outputs else None
    if db_url and plan.gradebook_url:
        check_gradebook_url(db_url, create=plan.create_gradebook)
    elif db_url:
        check_course_gradebook(db_url, course=plan.course, out=plan.out, assignment=plan.assignment,
                               create=plan.create_gradebook, what=f"c.CourseDirectory.db_url in {plan.course / CONFIG}")
    return view, fingerprint_of(view.grade_cells), db_url


def _jobs(plan: _Plan, view: CourseView, todo: list[str], db_url: str | None) -> list[Job]:
    """One job per student to grade, under one snapshot (copy detection reads the class once); nbgrader's
    autograded notebooks are written when the course's own gradebook is."""
    snapshot, autograded = secrets.token_hex(8), bool(plan.outputs) and db_url == plan.settings.db_url
    return [student_job(view, s, limits=plan.limits, autograded=autograded, snapshot=snapshot) for s in todo]


def _collect(plan: _Plan, view: CourseView, current: str, result: BatchResult, gradebook) -> None:
    """After grading: every current record of the class read back, notes on the rest, and the outputs."""
    out, assignment = plan.out, plan.assignment
    result.records = [r for s in plan.everyone if (r := read_record(out, s, assignment, current))]
    result.notes += _not_current(view, plan.everyone, plan.chosen, result.records)
    result.notes += _gone(out, assignment, plan.everyone)
    result.kept = [r.student_id for r in result.records if r.student_id not in plan.chosen]
    if plan.outputs:
        written = write_outputs(out, result.records, settings=plan.settings, assignment=assignment,
                                gradebook=gradebook, fresh=set(result.graded))
        result.records, result.late = written.records, written.late
        result.errors += written.errors
        result.notes += written.notes
        result.notes += manual_work_on_resubmissions(result.records, set(result.changed))


def _remove_stages(jobs: list[Job]) -> None:
    """The autograded notebooks a killed grading process was writing: its staging folders."""
    for job in jobs:
        if job.autograded is not None:
            remove_stages(job.autograded.parent)


def _plan(out: Path, view: CourseView, chosen: list[str], current: str, resume: bool,
          autograded: bool = False) -> BatchResult:
    """Which of ``chosen`` to grade: all of them, or with ``resume`` those without a record of their
    submission as it is now, graded by what grades now, and (``autograded``: the run writes them) those
    whose autograded notebooks are gone."""
    result = BatchResult(out)
    for student in chosen:
        record = read_record(out, student, view.assignment) if resume else None
        why = _outdated(record, current, view, student, autograded) if resume else "asked"
        (result.graded if why else result.skipped).append(student)
        {"grader": result.regraded, "submission": result.changed, "autograded": result.restored}.get(
            why, []).append(student)
    return result


def _outdated(record: Record | None, current: str, view: CourseView, student: str,
              autograded: bool = False) -> str | None:
    """Why ``record`` does not stand for the student's submission now: None when it does."""
    if record is None:
        return "missing"
    if record.fingerprint != current:
        return "grader"
    if record.submission != current_submission(view, student):
        return "submission"
    return "autograded" if autograded and _autograded_gone(view, record) else None


def _autograded_gone(view: CourseView, record: Record) -> bool:
    """Whether nbgrader's autograded notebooks that grading wrote for ``record`` are gone: a failed
    ``nbgrader autograde`` (or formgrader's Autograde button) removes the student's folder, which
    nbgrader had emptied first, and formgrader then lists the submission as not autograded. A record
    that wrote none (its grading failed before; ``unwritten``) is not one of them."""
    if record.unwritten or not record.files:
        return False
    folder = view.root / "autograded" / record.student_id / view.assignment
    return not all((folder / f"{nb}.ipynb").is_file() for nb in notebooks_of(view).names)


def _not_current(view: CourseView, everyone: list[str], chosen: list[str], records) -> list[str]:
    """Notes on the class outside ``chosen``: students the outputs lack (no current record) and records
    older than their submission."""
    have = {r.student_id: r for r in records}
    missing = [s for s in everyone if s not in chosen and s not in have]
    stale = [s for s in everyone if s not in chosen and s in have
             and have[s].submission != current_submission(view, s)]
    notes = []
    if missing:
        notes.append(f"{_some(missing)} ha{'s' if len(missing) == 1 else 've'} a submission but no record "
                     "graded by this grader, so the outputs lack them: run grade --resume to grade them")
    if stale:
        notes.append(f"{_some(stale)} resubmitted since graded; the outputs show the earlier work: run "
                     "grade --resume to regrade")
    return notes


def _gone(out: Path, assignment: str, everyone: list[str]) -> list[str]:
    """A note on students an earlier run graded whose submission folder is gone (still in the gradebook)."""
    gone = graded_but_gone(out, assignment, everyone)
    return [f"{_some(gone)} {'was' if len(gone) == 1 else 'were'} graded before, but submitted/<student>/{assignment}/ "
            "is gone: grades.csv, the pages and the report leave them out, while the gradebook keeps the earlier "
            "scores (nbgrader export lists them); put the folder back and run grade --resume, or remove the "
            "submission from the gradebook"] if gone else []


def _some(students: list[str]) -> str:
    names = ", ".join(shown(s) for s in students[:5])
    return names + (f" and {len(students) - 5} more" if len(students) > 5 else "")


@contextmanager
def _counting_on_stop(out: Path, everyone: list[str], assignment: str, fingerprint: str):
    """A stop signal leaves the block as ``BatchStopped``, which says how far the batch got."""
    try:
        yield
    except Stop as stop:
        done = sum(read_record(out, s, assignment, fingerprint) is not None for s in everyone)
        raise BatchStopped(stop.signum, out=out, done=done, total=len(everyone)) from None
    except SchedulerLost as lost:
        lost.out, lost.total = out, len(everyone)
        lost.done = sum(read_record(out, s, assignment, fingerprint) is not None for s in everyone)
        raise


def _gradebook_url(course: Course, url: str | None) -> str:
    """The gradebook this run writes: ``url`` if given, else the course's own."""
    return resolve_db_url(url, Path.cwd()) if url else course.db_url


def _finish(out: Path, record: Record, *, bar: Progress, errors: list[str], gradebook=None, course=None,
            assignment: str = "", changed: list[str] | None = None) -> None:
    """Write one record and send its scores to the gradebook writer (which records them while the rest is
    graded); a write error (a full disk, say) is that student's, and the batch goes on. ``changed`` gains the
    student when the record graded other work than the one it replaces (a resubmission, an earlier one
    collected with --before-duedate): a score a person gave stands on different work, and is flagged."""
    earlier = read_record(out, record.student_id, assignment)
    moved = bool(earlier and earlier.submission and record.submission and earlier.submission != record.submission)
    if moved and changed is not None and record.student_id not in changed:
        changed.append(record.student_id)
    try:
        with critical():                     # a stop signal waits until the record is whole
            write_record(out, record)
    except OutputError as exc:
        errors.append(f"record of {shown(record.student_id)}: {exc}")
    else:
        if gradebook is not None:
            times = submission_times(course, assignment, [record.student_id])
            gradebook.send(record, times[record.student_id].text(), changed=moved)
    errors += record.unwritten
    bar.advance(failed=record.needs_review)
