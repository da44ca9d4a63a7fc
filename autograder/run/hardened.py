"""Grade one submission safely: intake, sandboxed worker, rubric checks in the grader process."""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ..assignment import FUNCTIONS, NOTEBOOKS
from ..course.settings import find_course, infer_assignment, infer_student
from ..course.view import CourseView, read_course
from ..grading.fingerprint import fingerprint_of
from ..grading.namespace import run_cell
from ..grading.rubric import scaled
from ..inert import shown
from ..intake import Intake
from ..intake import intake_submission  # noqa: F401  (re-exported: tests and benchmarks call it here)
from ..intake.names import notebook_for
from ..records import Finding, OutputError, Record
from ..sandbox.forkclient import ForkServer
from ..sandbox.limits import Limits
from ..grading.seeds import student_seed
from .job import Job, student_job
from .sandboxed_student import SandboxedStudent
from ..gradebook.timestamps import read_timestamp
from ..outputs.autograded import autograded_notebook, write_autograded


def grade_submission(path, *, course=None, student_id=None, limits: Limits | None = None,
                     server: ForkServer | None = None, assignment: str | None = None,
                     autograded: Path | None = None, snapshot: str | None = None) -> Record:
    """The result record for one submission (a folder of notebooks or one notebook), graded in this
    process (``job_for`` says what the arguments default to); raises what grading raises."""
    job = job_for(path, course=course, student_id=student_id, assignment=assignment, limits=limits,
                  autograded=autograded, snapshot=snapshot)
    own = server is None
    server = server or ForkServer()
    try:
        return grade_job(job, server)
    finally:
        if own:
            server.close()


def job_for(path, *, course=None, student_id=None, assignment: str | None = None, limits: Limits | None = None,
            autograded: Path | None = None, snapshot: str | None = None) -> Job:
    """The job of grading ``path`` (a submission folder or one of its notebooks); ValueError when it is none.

    The course defaults to the one found above ``path``, the assignment and the student to what
    nbgrader's layout (``submitted/<student>/<assignment>``) says. With ``autograded`` (a folder), the
    notebooks nbgrader's tools read after ``nbgrader autograde`` are written there too. ``snapshot``: the
    batch's token, for copy detection (``intake_submission``)."""
    path = Path(os.path.abspath(path))                       # not resolved: links in a submission are not followed
    if not os.path.lexists(path):
        raise ValueError(f"{path} does not exist: give a submission folder "
                         f"(submitted/<student>/<assignment>) or one of its notebooks")
    course = Path(course).resolve() if course else find_course(path)
    assignment = assignment or infer_assignment(path, course)
    return student_job(read_course(course, assignment), student_id or infer_student(path, assignment), path,
                       limits=limits, autograded=autograded or False, snapshot=snapshot)


def grade_job(job: Job, server: ForkServer) -> Record:
    """The result record of ``job``, its workers started by ``server``; raises what grading raises
    (``run.grader.grade`` turns that into a record for review)."""
    path, view = job.folder, job.view
    intake = intake_submission(path, view, job.student, job.snapshot)     # its digest: exactly the bytes graded
    single = path.name.lower().endswith(".ipynb")
    notebook = notebook_for(path.name, NOTEBOOKS) if single else None
    notebooks = [nb for nb in NOTEBOOKS if not single or nb == notebook]
    seed = student_seed(job.student, view.course_id, job.assignment)
    deadline = time.monotonic() + job.limits.total_seconds     # one time budget for the whole submission
    graded = _side_by_side(notebooks, lambda nb, stop, live: grade_notebook(
        server, intake, nb, seed, job.limits, deadline, stop, live), deadline + job.limits.overrun_seconds,
        job.limits.overrun_seconds)
    events = [Finding(e, nb) for nb, g in zip(notebooks, graded) for e in g.events]     # what stopped a worker
    record = Record(job.student, scaled([c for g in graded for c in g.checks], view.cell_points),
                    assignment=job.assignment, fingerprint=fingerprint_of(view.grade_cells),
                    needs_review=intake.needs_review or bool(events), findings=(*intake.findings, *events),
                    notes=intake.notes + [n for g in graded for n in g.notes],
                    output="\n".join(g.output for g in graded if g.output),
                    sandbox=next((g.sandbox for g in graded if g.sandbox), {}), submission=intake.submission,
                    files=intake.files)
    if job.autograded is None:
        return record
    return replace(record, unwritten=_write_autograded(job.autograded, intake, record, view,
                                                       path.parent if single else path))


def _write_autograded(folder: Path, intake: Intake, record: Record, view: CourseView,
                      submission: Path) -> tuple[str, ...]:
    """nbgrader's autograded notebooks of this submission (see ``outputs.autograded``); what could not be
    written, one line each."""
    try:
        notebooks = {nb: autograded_notebook(view.handout(nb), intake.layout.get(nb), record, nb)
                     for nb in NOTEBOOKS}
        write_autograded(folder, notebooks, read_timestamp(submission).text(), intake.secret)
    except (OutputError, OSError, ValueError, KeyError, TypeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return (f"autograded notebooks of {shown(record.student_id)}: {shown(str(folder), 300)} could not be written ({why}), so "
                "formgrader shows this submission as not autograded; fix that folder and grade the student again "
                f"with --student {shown(record.student_id)}",)
    return ()


def grading_server(launch=None) -> ForkServer:
    """The fork server a batch grades with: it keeps one worker ready per notebook of the assignment,
    so the next submission's workers start while this one is graded. ``launch``: its process, when it
    was started ahead (``sandbox.launch.Launch``)."""
    return ForkServer(ready=len(NOTEBOOKS), launch=launch)


def grade_order(intake: Intake, notebook: str) -> list[tuple[str, int | None]]:
    """The notebook's grade ids with the index of the cell each stands at (None: not in the submission),
    in the order nbgrader's kernel reaches them."""
    at = {g.grade_id: g.index for g in intake.grade_cells if g.notebook == notebook}
    placed = [(g, at.get(g)) for g in NOTEBOOKS[notebook]]
    return sorted(placed, key=lambda p: float("inf") if p[1] is None else p[1])


@dataclass
class GradedNotebook:
    checks: list
    events: list[str]
    notes: list[str]
    output: str
    sandbox: dict


class GradingStalled(RuntimeError):
    """A notebook's grading went on after the submission's watchdog had ended its workers."""


def _side_by_side(notebooks: list[str], grade, limit: float, overrun: float) -> list:
    """``grade(notebook, stop, live)`` for every notebook, each in its own thread (their workers start and
    run side by side). If this thread is interrupted (a stop signal), every worker is ended at once.

    The submission's watchdog: a notebook not graded by ``limit`` (time.monotonic) has its worker ended and
    what it graded kept, flagged for review (its checks not yet run fail, saying the time ran out); one still
    grading ``overrun`` seconds later is given up (``GradingStalled``). The threads are daemons: one that
    never ends cannot keep the process (nbgrader's, which grades in its own) from ending."""
    stop = threading.Event()
    threads = [_Notebook(grade, nb, stop) for nb in notebooks]
    try:
        if not _joined(threads, limit):
            stop.set()
            for thread in threads:
                thread.overran(overrun)
            if not _joined(threads, time.monotonic() + overrun):
                raise GradingStalled(f"grading went on {overrun:g} s after the watchdog ended its workers")
        return [thread.result() for thread in threads]
    except BaseException:
        stop.set()
        for thread in threads:
            thread.abort()
        raise


class _Notebook(threading.Thread):
    """One notebook graded in a daemon thread: its result, or what it raised."""

    def __init__(self, grade, notebook: str, stop: threading.Event):
        super().__init__(name=f"autograder-{notebook}", daemon=True)
        self.grade, self.notebook, self.stop, self.live = grade, notebook, stop, []
        self.value, self.error = None, None
        self.start()

    def run(self) -> None:
        try:
            self.value = self.grade(self.notebook, self.stop, self.live)
        except BaseException as exc:  # noqa: BLE001 - raised again in the grading thread (``result``)
            self.error = exc

    def result(self):
        if self.error is not None:
            raise self.error
        return self.value

    def abort(self) -> None:
        for student in list(self.live):
            student.abort()

    def overran(self, overrun: float) -> None:
        """The watchdog's turn: a notebook still grading is noted for review and its worker ended."""
        if not self.is_alive():
            return
        for student in list(self.live):
            student.events.append(f"Grading {self.notebook}.ipynb was still running {overrun:g} s past the "
                                  "submission's time budget: the grader's watchdog ended its worker, and the "
                                  "checks not yet run were not graded.")
        self.abort()


def _joined(threads: list[threading.Thread], limit: float) -> bool:
    """Whether every thread ended by ``limit`` (time.monotonic)."""
    for thread in threads:
        thread.join(max(limit - time.monotonic(), 0))
    return not any(thread.is_alive() for thread in threads)


def grade_notebook(server: ForkServer, intake: Intake, notebook: str, seed: int, limits: Limits, deadline: float,
                   stop: threading.Event | None = None, live: list | None = None) -> GradedNotebook:
    """One notebook in its own worker (as nbgrader runs it in its own kernel). Its cells run in order and each
    grade cell's checks run where that cell stands, on the functions defined up to there; a grade cell the
    submission lacks is checked after the last cell."""
    cells = [c for c in intake.cells if c.notebook == notebook]
    student = SandboxedStudent(server, cells, FUNCTIONS[notebook], limits, notebook=notebook, deadline=deadline,
                               stop=stop, start=False)
    student.unread = not cells and bool(intake.flags().get(notebook))   # "not defined" would be untrue then
    if live is not None:
        live.append(student)
    results = {}
    try:
        for grade_id, index in grade_order(intake, notebook):
            student.run_to(index)
            results[grade_id] = run_cell(student, grade_id, seed=seed)
        student.run_to(None, restart=False)                   # the cells after the last grade cell run too
    finally:
        student.close()
    checks = [r for g in NOTEBOOKS[notebook] for r in results[g]]     # reported in the rubric's order
    output = "\n".join(student.outputs)
    if output.strip():
        output = f"--- {notebook}.ipynb ---\n{output}"
    return GradedNotebook(checks, student.events, student.notes, output, student.status)
