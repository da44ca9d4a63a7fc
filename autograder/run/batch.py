"""Grade a whole class: parallel, resumable, one bad submission never stops the batch.

Each submission is graded by ``grade_one`` in a worker process of a local
process pool or on a Dask distributed cluster (the same function either way);
each process keeps one sandbox fork server. Every finished record is written
atomically at once, so a killed batch resumes where it stopped. A run holds
its output folder's lock from start to end; every process it starts ends
with it (see ``autograder.lifecycle``). Who handed in is for ``course.submissions`` to say.
"""
from __future__ import annotations

import atexit
import functools
import os
import secrets
import threading
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..assignment import NOTEBOOKS
from ..grading.chapter import check_chapter, check_points
from ..course.settings import CONFIG, Course, choose_assignment, resolve_db_url, unusable_settings
from ..course.submissions import discover, not_a_folder, stray_entries, without_assignment
from ..course.view import CourseView, course_settings, read_course
from ..gradebook.client import GradebookWriter
from ..gradebook.latepenalties import check_plugin
from ..gradebook.runlock import RunLocks
from ..gradebook.url import check_course_gradebook, check_gradebook_url
from ..inert import shown
from ..intake.expected import notebooks_of
from ..records import (OutputError, Record, check_record_names, graded_but_gone, name_digest, not_graded, read_record,
                       synced_at_end, write_record)
from ..lifecycle import Stop, critical
from .progress import Progress

_SERVER = None
_SERVER_LOCK = threading.Lock()
_LAUNCH = None         # a fork server process started ahead by ``grade_batch``, adopted by ``_server``
SMALL_CLASS = 30       # up to this many submissions are graded in the run's own process (see default_workers)


def _server():
    """This process's fork server (the one started ahead, else one started now), replaced if it died."""
    global _SERVER, _LAUNCH
    from .hardened import grading_server
    with _SERVER_LOCK:
        if _SERVER is None or not _SERVER.alive():
            launch, _LAUNCH = _LAUNCH, None
            _SERVER = grading_server(launch)
            atexit.register(_SERVER.close)
            os.register_at_fork(after_in_child=functools.partial(_forget_server, _SERVER))
        return _SERVER


def _forget_server(server) -> None:
    """In a forked child: the parent's fork server is not ours; close our copy of its socket,
    so that the server still sees its owner go."""
    global _SERVER
    if _SERVER is server:
        _SERVER = None
    try:
        server.control.close()
    except OSError:
        pass


def _launch_ahead() -> None:
    """Start this process's fork server now, without waiting for it: it is ready (about a second)
    while the run imports, checks the course and starts the gradebook writer."""
    global _LAUNCH
    from ..sandbox.launch import Launch
    with _SERVER_LOCK:
        if _LAUNCH is None and (_SERVER is None or not _SERVER.alive()):
            _LAUNCH = Launch()


def _drop_launch() -> None:
    """A fork server started ahead that grading never used (the run stopped before) ends now."""
    global _LAUNCH
    with _SERVER_LOCK:
        launch, _LAUNCH = _LAUNCH, None
    if launch is not None:
        launch.abandon()


def default_workers(submissions: int) -> int:
    """Grading processes when none are asked for: one for a small class, else one per core. Each
    process of a pool has its own fork server, whose start costs about a second of CPU, and gains
    about 50 ms per submission on 2 cores (README, Performance): below ``SMALL_CLASS`` submissions
    one process, started at once, finishes first."""
    return 1 if submissions <= SMALL_CLASS else os.cpu_count() or 1


def grade_one(course: str, assignment: str, student_id: str, limits: dict | None = None,
              autograded: bool = False, snapshot: str | None = None, view: CourseView | None = None) -> Record:
    """One student's record; never raises (a grader failure becomes a record for review). With
    ``autograded``, nbgrader's autograded notebooks are written as ``nbgrader autograde`` leaves them.
    ``snapshot``: the batch's token; copy detection reads the class once per process and token. ``view``: the
    course as the batch read it (a grading process of a pool reads it once, ``course.view``)."""
    from .hardened import grade_submission
    from ..sandbox.limits import Limits
    folder = Path(course) / "submitted" / student_id / assignment
    odd = not_a_folder(folder)
    if odd:
        return failed_record(student_id, f"submitted/{shown(student_id)[1:-1]}/{assignment} is {odd}, not a folder: "
                             "nothing could be graded; ask the student to resubmit.", course=course,
                             assignment=assignment, view=view)
    try:
        return grade_submission(folder, course=course, student_id=student_id, server=_server(),
                                limits=Limits(**limits) if limits else None, assignment=assignment,
                                autograded=Path(course) / "autograded" / student_id / assignment if autograded
                                else None, snapshot=snapshot, view=view)
    except Exception as exc:  # noqa: BLE001 - one submission must not stop the batch
        return failed_record(student_id, f"The grader failed on this submission ({type(exc).__name__}: "
                             f"{exc}); an instructor must grade it by hand.", traceback.format_exc(limit=4),
                             course=course, assignment=assignment, view=view)


def current_submission(course, assignment: str, student: str, view: CourseView | None = None) -> str:
    """The digest of ``submitted/<student>/<assignment>`` as it is now, as a record carries it
    (``intake.digest``): the one identity of "the same submission" for --resume and the nbgrader door."""
    return folder_digest(Path(course) / "submitted" / student / assignment, course, assignment, view)


def folder_digest(folder, course, assignment: str, view: CourseView | None = None) -> str:
    """The digest of the submission in ``folder`` (any folder: ``watch`` grades inbound's) as intake of the
    course's notebooks reads it, as a record carries it."""
    from ..intake.digest import submission_digest
    return submission_digest(Path(folder), _names(course, assignment, view), assignment)


def _names(course, assignment: str, view: CourseView | None = None) -> tuple[str, ...]:
    """The assignment's notebooks, as intake takes them (the digest reads only those)."""
    from ..intake.expected import CourseError, course_notebooks
    try:
        if view is not None and view.assignment == assignment:
            return notebooks_of(view).names
        return course_notebooks(Path(course), assignment).names
    except CourseError:                                    # no notebooks: the digest then reads none
        return ()


def failed_record(student_id: str, message: str, detail: str = "", *, course=None,
                  assignment: str = "", view: CourseView | None = None) -> Record:
    """Every check at 0 with ``message``, marked for review (``view``: the course as the batch read it)."""
    from ..grading.fingerprint import fingerprint, fingerprint_of
    from ..grading.rubric import RUBRIC, scaled
    checks = [not_graded(g, i, message) for g, items in RUBRIC.items() for i in items]
    checks = scaled(checks, view.cell_points) if view is not None and view.assignment == assignment else checks
    return Record(student_id, checks, assignment=assignment, needs_review=True, integrity=[message],
                  grader_error=detail, flags={"": [message]},
                  fingerprint=fingerprint_of(view.grade_cells) if view is not None and view.assignment == assignment
                  else fingerprint(course, assignment) if course else "",
                  submission=current_submission(course, assignment, student_id, view) if course else "")


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
    workers = workers or default_workers(len(chosen))
    if not scheduler and workers <= 1:
        _launch_ahead()                                         # first: it takes the longest to be ready
    try:
        return _grade_batch(settings, course, assignment, out, everyone, chosen, workers=workers, resume=resume,
                            scheduler=scheduler, limits=limits, progress=progress, outputs=outputs,
                            gradebook_url=gradebook_url, create_gradebook=create_gradebook)
    finally:
        _drop_launch()


def _grade_batch(settings, course: Path, assignment: str, out: Path, everyone: list[str], chosen: list[str], *,
                 workers: int, resume: bool, scheduler, limits, progress: bool, outputs: bool, gradebook_url,
                 create_gradebook: bool) -> BatchResult:
    from ..grading.fingerprint import fingerprint_of
    view = read_course(course, assignment)                      # the course, read once for the whole run
    check_chapter(course, assignment)
    notebooks_of(view)                                          # a course that cannot grade stops here, once
    check_points(course, assignment, view)
    if outputs:
        check_plugin(view.course)                               # a late plugin that cannot load stops us now
    current = fingerprint_of(view.grade_cells)
    db_url = _gradebook_url(settings, gradebook_url) if outputs else None
    if db_url:
        if gradebook_url:
            check_gradebook_url(db_url, create=create_gradebook)
        else:
            check_course_gradebook(db_url, course=course, out=out, assignment=assignment, create=create_gradebook,
                                   what=f"c.CourseDirectory.db_url in {course / CONFIG}")
    # every file is renamed into place whole; the disk is waited for once, when the run ends
    with _counting_on_stop(out, chosen, assignment, current), RunLocks(out, db_url) as locks, synced_at_end():
        result = _plan(out, course, assignment, chosen, current, resume)
        result.notes += [*settings.notes, *stray_entries(course / "submitted"),
                         *without_assignment(course / "submitted", assignment)]
        todo = result.graded
        bar = Progress(len(chosen), done=len(result.skipped), enabled=progress)
        # nbgrader loads slowly: its writer starts now and works while the batch is graded
        gradebook = GradebookWriter(db_url, settings, assignment, locks) if outputs else None
        run = _run_dask if scheduler else _run_local
        try:
            done = functools.partial(_finish, out, bar=bar, errors=result.errors, gradebook=gradebook, course=course,
                                     assignment=assignment)
            run(todo, done, course=course, assignment=assignment, view=view,
                limits=limits, workers=workers, scheduler=scheduler, snapshot=secrets.token_hex(8),
                autograded=bool(outputs) and db_url == settings.db_url,
                inherited=(*locks.fds, *(gradebook.fds() if gradebook else ())))
            result.records = [r for s in everyone if (r := read_record(out, s, assignment, current))]
            result.notes += _not_current(course, assignment, everyone, chosen, result.records)
            result.notes += _gone(out, assignment, everyone)
            result.kept = [r.student_id for r in result.records if r.student_id not in chosen]
            if outputs:
                from ..outputs.write import manual_work_on_resubmissions, write_outputs
                written = write_outputs(out, result.records, course=course, assignment=assignment,
                                        gradebook=gradebook, settings=settings, fresh=set(todo))
                result.records, result.late = written.records, written.late
                result.errors += written.errors
                result.notes += manual_work_on_resubmissions(result.records, set(result.changed))
        except BaseException:
            if gradebook:
                gradebook.abandon()
            raise
        finally:
            bar.close()                          # what follows (a message, say) starts on its own line
    return result


def _plan(out: Path, course: Path, assignment: str, chosen: list[str], current: str, resume: bool) -> BatchResult:
    """Which of ``chosen`` to grade: all of them, or with ``resume`` those without a record of their
    submission as it is now, graded by what grades now."""
    result = BatchResult(out)
    for student in chosen:
        why = _outdated(read_record(out, student, assignment), current,
                        course / "submitted" / student / assignment) if resume else "asked"
        (result.graded if why else result.skipped).append(student)
        {"grader": result.regraded, "submission": result.changed}.get(why, []).append(student)
    return result


def _outdated(record: Record | None, current: str, folder: Path) -> str | None:
    """Why ``record`` does not stand for the submission in ``folder`` now: None when it does."""
    if record is None:
        return "missing"
    if record.fingerprint != current:
        return "grader"
    course, assignment, student = folder.parent.parent.parent, folder.name, folder.parent.name
    return "submission" if record.submission != current_submission(course, assignment, student) else None


def _not_current(course: Path, assignment: str, everyone: list[str], chosen: list[str], records) -> list[str]:
    """Notes on the class outside ``chosen``: students the outputs lack (no current record) and records
    older than their submission."""
    have = {r.student_id: r for r in records}
    missing = [s for s in everyone if s not in chosen and s not in have]
    stale = [s for s in everyone if s not in chosen and s in have
             and have[s].submission != current_submission(course, assignment, s)]
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
            assignment: str = "") -> None:
    """Write one record and send its scores to the gradebook writer (which records them while the rest is
    graded); a write error (a full disk, say) is that student's, and the batch goes on."""
    try:
        with critical():                     # a stop signal waits until the record is whole
            write_record(out, record)
    except OutputError as exc:
        errors.append(f"record of {shown(record.student_id)}: {exc}")
    else:
        if gradebook is not None:
            from ..gradebook.lateness import submission_times
            times = submission_times(course, assignment, [record.student_id])
            gradebook.send(record, times[record.student_id].text())
    errors += record.unwritten
    bar.advance(failed=record.needs_review)


def _run_local(todo, finish, *, course, assignment, limits, workers, scheduler=None, inherited=(),
               autograded=False, snapshot=None, view=None):
    if workers <= 1 or len(todo) <= 1:
        pool = _server().pool if todo else None
        try:
            for i, student in enumerate(todo):
                pool.expect((len(todo) - i) * len(NOTEBOOKS))     # no worker started that nobody takes
                finish(grade_one(str(course), assignment, student, limits, autograded, snapshot, view=view))
        finally:
            if pool is not None:
                pool.expect(0)                   # its ready workers end now, while the outputs are written
        return
    from .local_pool import run_pool
    task = functools.partial(grade_one, str(course), assignment, limits=limits, autograded=autograded,
                             snapshot=snapshot)
    run_pool(task, todo, finish, functools.partial(_gave_up, str(course), assignment), workers=workers,
             inherited=inherited)


def _gave_up(course: str, assignment: str, student: str) -> Record:
    return failed_record(student, "A grading process died twice on this submission, graded alone each time; the "
                         "rest of the class was graded normally. An instructor must grade it by hand.", course=course,
                         assignment=assignment)


def _run_dask(todo, finish, *, course, assignment, limits, workers, scheduler, inherited=(), autograded=False,
              snapshot=None, view=None):
    try:
        from distributed import Client, as_completed as dask_completed
    except ImportError:
        raise RuntimeError("--scheduler needs Dask distributed: pip install 'attention-course[dask]'") from None
    with _quiet("distributed", "tornado", "asyncio"), Client(scheduler) as client:
        futures = {client.submit(grade_one, str(course), assignment, s, limits, autograded, snapshot, pure=False,
                                 key=dask_key(s)): s for s in todo}
        for fut in dask_completed(futures):
            finish(_dask_record(client, fut, futures[fut], scheduler, course=str(course), assignment=assignment))


def dask_key(student: str) -> str:
    """The Dask key of a student's task: a digest, since an id may hold any bytes of a folder name (one
    that is not UTF-8 cannot be sent to the scheduler: it lost the connection, and the batch stopped)."""
    return "grade-" + name_digest(student, 24)


def _dask_record(client, fut, student: str, scheduler: str, *, course: str, assignment: str) -> Record:
    """The task's record; a task whose workers died (Dask retried it as often as it allows) is that
    submission's failure alone; a lost scheduler stops the batch (SchedulerLost), keeping what is written."""
    try:
        return fut.result()
    except Exception as exc:  # noqa: BLE001 - grade_one never raises: this is the cluster's failure
        if client.status != "running" or "lost the connection" in str(exc):
            raise SchedulerLost(f"the Dask scheduler at {scheduler} was lost ({type(exc).__name__}: "
                                f"{str(exc)[:200]})") from None
        return failed_record(student, f"The Dask worker grading this submission died ({type(exc).__name__}: "
                             f"{str(exc)[:300]}); grade it again with --student, or by hand.",
                             course=course, assignment=assignment)


class SchedulerLost(RuntimeError):
    """The Dask scheduler went away mid-run: ``done`` of ``total`` records are complete in ``out``."""
    out: Path | None = None
    done = total = 0


@contextmanager
def _quiet(*prefixes: str):
    """Dask's own log lines (a lost connection's tracebacks, from its loggers and tornado's) stay out of
    the run's output: the run says what happened itself."""
    import logging
    named = [logging.getLogger(n) for n in list(logging.root.manager.loggerDict) if n.startswith(prefixes)]
    logs = {log: log.level for log in [*named, *map(logging.getLogger, prefixes)]}
    for log in logs:
        log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for log, level in logs.items():
            log.setLevel(level)
