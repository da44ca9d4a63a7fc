"""Where ``watch`` grades: the same jobs and executors as ``grade`` (``run.executors``), one submission
at a time in a grading process of its own (or on a Dask cluster with ``--scheduler``), so that a
submission that kills its grading process never stops the service."""
from __future__ import annotations

from pathlib import Path

from ..course.view import read_course
from ..run.job import Job, student_job
from ..records import name_digest
from ..run.dask import DaskCluster
from ..run.local_pool import LocalPool


def watch_executor(scheduler: str | None):
    """A Dask cluster's client, or one local grading process, its fork server starting now."""
    if scheduler:
        return DaskCluster(scheduler, key=lambda entry: f"watch-{_digest(entry)}")
    return LocalPool(1).start()


def _digest(name: str) -> str:
    """A Dask key for an inbound name (which may hold any bytes)."""
    return name_digest(name, 32)


def inbound_job(course: Path, assignment: str, folder: Path, student: str, visible: bool, entry: str) -> Job:
    """The job of grading the inbound submission ``entry`` (its folder), the course as it is now."""
    return student_job(read_course(course, assignment), student, folder, visible=visible, key=entry)
