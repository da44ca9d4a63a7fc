"""Grade one inbound submission with the hardened grader (the same ``grade_submission`` that ``grade``
and ``check`` use), in this process or on a Dask worker; never raises.

With ``show = "visible"`` the notebook's visible-test cells (the course's text of them, which the
student already has) also run in a sandboxed worker, where the submission places them, after the
cells before them: their pass or failure message is what the student sees.
"""
from __future__ import annotations

import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..records import Record
from .pages import VisibleResult


@dataclass(frozen=True)
class Graded:
    record: Record
    visible: dict = field(default_factory=dict)        # notebook -> [VisibleResult], with show = "visible"

    def to_dict(self) -> dict:
        return {"record": self.record.to_dict(),
                "visible": {nb: [vars(r) for r in results] for nb, results in self.visible.items()}}

    @classmethod
    def from_dict(cls, data: dict) -> Graded:
        return cls(Record.from_dict(data["record"]),
                   {nb: [VisibleResult(**r) for r in results] for nb, results in data.get("visible", {}).items()})


def grade_inbound(course: str, assignment: str, folder: str, student: str, visible: bool = False,
                  server=None) -> Graded:
    """The record of the submission in ``folder`` (and its visible tests' results when asked); ``server``:
    the fork server to use (default: this process's, as on a Dask worker)."""
    from ..run.batch import _server, failed_record, folder_digest
    from ..run.hardened import grade_submission
    try:
        server = server or _server()
        record = grade_submission(folder, course=course, student_id=student, server=server, assignment=assignment)
        return Graded(record, visible_tests(Path(folder), Path(course), assignment, student, server)
                      if visible else {})
    except Exception as exc:  # noqa: BLE001 - one submission must not stop the service
        failed = failed_record(student, f"The grader failed on this submission ({type(exc).__name__}: {exc}); an "
                               "instructor must grade it by hand.", traceback.format_exc(limit=4), course=course,
                               assignment=assignment)
        return Graded(replace(failed, submission=folder_digest(folder, course, assignment)))


def visible_tests(folder: Path, course: Path, assignment: str, student: str, server) -> dict[str, list[VisibleResult]]:
    from ..run.hardened import intake_submission
    from ..course.view import read_course
    from ..intake import CodeCell
    from ..intake.expected import notebooks_of
    from ..assignment import FUNCTIONS
    from ..grading.rubric import RUBRIC
    from ..sandbox.limits import Limits
    from ..run.sandboxed_student import SandboxedStudent
    view = read_course(course, assignment)
    intake = intake_submission(folder, course, assignment, student, notebooks=notebooks_of(view))
    out = {}
    for notebook, expected in notebooks_of(view).expected.items():
        tests = {gid: cell.text for gid, cell in expected.items() if cell.meta[0] and gid not in RUBRIC}
        at = {g.grade_id: g.index for g in intake.grade_cells if g.notebook == notebook and g.grade_id in tests}
        last = max([c.index for c in intake.cells if c.notebook == notebook] + list(at.values()) + [0])
        placed = {gid: at.get(gid, last + 1 + n) for n, gid in enumerate(sorted(tests))}
        cells = sorted([c for c in intake.cells if c.notebook == notebook] +
                       [CodeCell(notebook, index, tests[gid]) for gid, index in placed.items()],
                       key=lambda c: c.index)
        worker = SandboxedStudent(server, cells, FUNCTIONS.get(notebook, ()), Limits(), notebook=notebook,
                                  start=False)
        try:
            worker.run_to(None)
        finally:
            worker.close()
        out[notebook] = [_result(gid, index, notebook, worker) for gid, index in
                         sorted(placed.items(), key=lambda p: p[1])]
    return out


def _result(grade_id: str, index: int, notebook: str, worker) -> VisibleResult:
    """Failed when the worker noted this cell's error (``Cell <index> of <notebook>.ipynb raised ...``) or
    the cell stopped the worker; passed when the last worker ran it without error; else it never ran."""
    prefix = f"Cell {index} of {notebook}.ipynb raised "
    failed = next((n[len(prefix):] for n in worker.notes if n.startswith(prefix)), None)
    if failed is not None:
        return VisibleResult(grade_id, False, failed)
    position = next(i for i, c in enumerate(worker.cells) if c.index == index)
    if position in worker.skip:
        return VisibleResult(grade_id, False, "this cell stopped the notebook (it ran too long or crashed)")
    if worker.ran > position:
        return VisibleResult(grade_id, True)
    return VisibleResult(grade_id, None, "the notebook stopped before this cell (see the notes)")


class LocalGrader:
    """Grades in this process, one submission at a time, with a fork server of its own."""

    def __init__(self):
        from ..run.hardened import grading_server
        self.server, self.done = grading_server(), []

    def submit(self, key: str, course: str, assignment: str, folder: str, student: str, visible: bool) -> None:
        self.done.append((key, grade_inbound(course, assignment, folder, student, visible, server=self.server)))

    def finished(self) -> list:
        done, self.done = self.done, []
        return done

    @property
    def busy(self) -> int:
        return 0

    def close(self) -> None:
        self.server.close()


def _digest(name: str) -> str:
    """A Dask key for an inbound name (which may hold any bytes)."""
    from ..records import name_digest
    return name_digest(name, 32)


class DaskGrader:
    """Sends each submission to a Dask distributed cluster, as ``grade --scheduler`` does; the folders
    must be readable at the same paths on its workers."""

    def __init__(self, scheduler: str):
        try:
            from distributed import Client
        except ImportError:
            raise RuntimeError("--scheduler needs Dask distributed: pip install 'attention-course[dask]'") from None
        self.client, self.futures = Client(scheduler), {}

    def submit(self, key: str, course: str, assignment: str, folder: str, student: str, visible: bool) -> None:
        self.futures[key] = self.client.submit(grade_inbound, course, assignment, folder, student, visible,
                                               pure=False, key=f"watch-{_digest(key)}")

    def finished(self) -> list:
        done = [(key, fut) for key, fut in self.futures.items() if fut.done()]
        out = []
        for key, fut in done:
            del self.futures[key]
            try:
                out.append((key, fut.result()))
            except Exception as exc:  # noqa: BLE001 - a lost worker: this submission is graded again later
                out.append((key, exc))
        return out

    @property
    def busy(self) -> int:
        return len(self.futures)

    def close(self) -> None:
        self.client.close()
