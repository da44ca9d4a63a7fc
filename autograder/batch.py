"""Grade a whole class: parallel, resumable, one bad submission never stops the batch.

Each submission is graded by ``grade_one`` in a worker process of a local
process pool or on a Dask distributed cluster (the same function either way);
each process keeps one sandbox fork server. Every finished record is written
atomically at once, so a killed batch resumes where it stopped. A run holds
its output folder's lock from start to end; every process it starts ends
with it (see ``autograder.lifecycle``).
"""
from __future__ import annotations

import atexit
import functools
import os
import threading
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .course import Course, choose_assignment, load_course, resolve_db_url
from .inert import shown
from .intake import course_notebooks
from .lifecycle import Stop, critical
from .outputs.gradebook import GradebookWriter
from .outputs.runlock import RunLocks
from .progress import Progress
from .records import OutputError, read_record, write_record

_SERVER = None
_SERVER_LOCK = threading.Lock()


def _server():
    """This process's fork server, started on first use and replaced if it died."""
    global _SERVER
    from .sandbox.session import ForkServer
    with _SERVER_LOCK:
        if _SERVER is None or not _SERVER.alive():
            _SERVER = ForkServer()
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


def grade_one(course: str, assignment: str, student_id: str, limits: dict | None = None) -> dict:
    """One student's complete record; never raises (a grader failure becomes a record for review)."""
    from .hardened import grade_submission
    from .sandbox.limits import Limits
    folder = Path(course) / "submitted" / student_id / assignment
    try:
        record = grade_submission(folder, course=course, student_id=student_id, server=_server(),
                                  limits=Limits(**limits) if limits else None, assignment=assignment)
    except Exception as exc:  # noqa: BLE001 - one submission must not stop the batch
        record = failed_record(student_id, f"The grader failed on this submission ({type(exc).__name__}: "
                               f"{exc}); an instructor must grade it by hand.", traceback.format_exc(limit=4))
    record.update(complete=True, assignment=assignment)
    return record


def failed_record(student_id: str, message: str, detail: str = "") -> dict:
    from .grading import build_record
    from .rubric import RUBRIC
    checks = [{"grade_id": g, "check": i.name, "category": i.category, "points": 0, "max_points": i.points,
               "passed": False, "diagnosis": None, "message": "Not graded: " + message, "details": {}}
              for g, items in RUBRIC.items() for i in items]
    record = build_record(student_id, checks, integrity=[message], needs_review=True)
    record.update(notes=[], output="", sandbox={}, grader_error=detail)
    return record


@dataclass
class BatchResult:
    out: Path
    records: list[dict] = field(default_factory=list)
    graded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)     # outputs that could not be written (one line each)
    notes: list[str] = field(default_factory=list)


def discover(course: Path, assignment: str, only: list[str] | None = None) -> list[str]:
    root = course / "submitted"
    found = sorted(p.parent.name for p in root.glob(f"*/{assignment}") if p.is_dir()) if root.is_dir() else []
    if not found:
        raise ValueError(f"no submissions found: expected folders {root}/<student>/{assignment}/ "
                         "(nbgrader's layout); check --course and --assignment")
    if only:
        missing = sorted(set(only) - set(found))
        if missing:
            raise ValueError(f"no submission folder for {', '.join(missing)} under {root}/<student>/{assignment}")
        found = [s for s in found if s in only]
    return found


class BatchStopped(Stop):
    """A signal stopped the batch: ``done`` of ``total`` records are complete in ``out``."""

    def __init__(self, signum: int, *, out: Path, done: int, total: int):
        super().__init__(signum)
        self.out, self.done, self.total = out, done, total


def grade_batch(*, course=".", assignment: str | None = None, out=None, workers: int | None = None,
                resume: bool = False, scheduler: str | None = None, students=None, limits: dict | None = None,
                progress: bool = True, outputs: bool = True, gradebook_url: str | None = None) -> BatchResult:
    """Grade ``course/submitted/*/<assignment>`` (default: the course's only assignment) into ``out``
    (default ``course/grading``); scores go to the course's gradebook unless ``gradebook_url`` is given."""
    settings = load_course(course)
    course, assignment = settings.root, choose_assignment(settings.root, assignment)
    out = Path(out).resolve() if out else course / "grading"
    everyone = discover(course, assignment, students)
    course_notebooks(course, assignment)                        # a course that cannot grade stops here, once
    db_url = _gradebook_url(settings, gradebook_url) if outputs else None
    with _counting_on_stop(out, everyone, assignment), RunLocks(out, db_url) as locks:
        todo = [s for s in everyone if not (resume and read_record(out, s, assignment))]
        result = BatchResult(out, graded=todo, skipped=[s for s in everyone if s not in todo],
                             notes=list(settings.notes))
        bar = Progress(len(everyone), done=len(result.skipped), enabled=progress)
        # nbgrader loads slowly: its writer starts now and works while the batch is graded
        gradebook = GradebookWriter(db_url, settings, assignment, locks) if outputs else None
        run = _run_dask if scheduler else _run_local
        try:
            run(todo, lambda rec: _finish(out, rec, bar, result.errors), course=course, assignment=assignment,
                limits=limits, workers=workers or os.cpu_count() or 1, scheduler=scheduler,
                inherited=(*locks.fds, *(gradebook.fds() if gradebook else ())))
            result.records = [r for s in everyone if (r := read_record(out, s, assignment))]
            if outputs:
                from .outputs import write_outputs
                result.errors += write_outputs(out, result.records, course=course, assignment=assignment,
                                               gradebook=gradebook)
        except BaseException:
            if gradebook:
                gradebook.abandon()
            raise
        finally:
            bar.close()                          # what follows (a message, say) starts on its own line
    return result


@contextmanager
def _counting_on_stop(out: Path, everyone: list[str], assignment: str):
    """A stop signal leaves the block as ``BatchStopped``, which says how far the batch got."""
    try:
        yield
    except Stop as stop:
        done = sum(read_record(out, s, assignment) is not None for s in everyone)
        raise BatchStopped(stop.signum, out=out, done=done, total=len(everyone)) from None


def _gradebook_url(course: Course, url: str | None) -> str:
    """The gradebook this run writes: ``url`` if given, else the course's own."""
    return resolve_db_url(url, Path.cwd()) if url else course.db_url


def _finish(out: Path, record: dict, bar: Progress, errors: list[str]) -> None:
    """Write one record; a write error (a full disk, say) is that student's, and the batch goes on."""
    try:
        with critical():                     # a stop signal waits until the record is whole
            write_record(out, record)
    except OutputError as exc:
        errors.append(f"record of {shown(record['student_id'])}: {exc}")
    bar.advance(failed=bool(record.get("needs_review")))


def _run_local(todo, finish, *, course, assignment, limits, workers, scheduler=None, inherited=()):
    if workers <= 1 or len(todo) <= 1:
        for student in todo:
            finish(grade_one(str(course), assignment, student, limits))
        return
    from .local_pool import run_pool
    run_pool(functools.partial(grade_one, str(course), assignment, limits=limits), todo, finish,
             functools.partial(_gave_up, assignment), workers=workers, inherited=inherited)


def _gave_up(assignment: str, student: str) -> dict:
    return dict(failed_record(student, "A grading process died twice on this submission."),
                complete=True, assignment=assignment)


def _run_dask(todo, finish, *, course, assignment, limits, workers, scheduler, inherited=()):
    try:
        from distributed import Client, as_completed as dask_completed
    except ImportError:
        raise RuntimeError("--scheduler needs Dask distributed: pip install 'attention-course[dask]'") from None
    with Client(scheduler) as client:
        futures = [client.submit(grade_one, str(course), assignment, s, limits, pure=False, key=f"grade-{s}")
                   for s in todo]
        for fut in dask_completed(futures):
            finish(fut.result())
