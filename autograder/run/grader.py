"""The one grading function: ``grade(job)``, wherever an executor runs it; it never raises."""
from __future__ import annotations

import traceback

from ..course.submissions import not_a_folder
from .job import Graded, Job, failed, grader_failed, not_a_folder_text
from .server import SERVER
from ..assignment import NOTEBOOKS


def grade(job: Job, server=None, ahead: int | None = None) -> Graded:
    """The record of ``job`` (a failed record for review when it cannot be graded), with its visible
    tests' results when the job asks. ``server``: the fork server (default: this process's). ``ahead``:
    how many jobs this process grades after this one, when that is known (its ready workers then match)."""
    odd = not_a_folder(job.folder) if _nbgrader_layout(job) else None
    if odd:
        return Graded(failed(job, not_a_folder_text(job, odd)))
    try:
        from .hardened import grade_job  # (the rubric: numpy, when a job is graded)
        server = server or SERVER.get()
        _expect(server, ahead, 1)
        try:
            record = grade_job(job, server)
            if not job.visible:
                return Graded(record)
            from .visible import visible_tests  # (the rubric: numpy)
            return Graded(record, visible_tests(job, server))
        finally:
            _expect(server, ahead, 0)
    except Exception as exc:  # noqa: BLE001 - one submission must not stop the batch or the service
        return Graded(failed(job, grader_failed(exc), traceback.format_exc(limit=4)))


def _nbgrader_layout(job: Job) -> bool:
    """Whether the job's folder is ``submitted/<student>/<assignment>`` of its course."""
    return job.folder == job.view.root / "submitted" / job.student / job.assignment


def _expect(server, ahead: int | None, this: int) -> None:
    """Tell the fork server's pool how many workers are still to be taken: none is started that nobody
    takes, and the ready ones end as soon as the last submission is graded."""
    if ahead is not None and (this or not ahead):
        server.pool.expect((ahead + this) * len(NOTEBOOKS))
