"""``check``: one submission graded in a grading process of its own, as ``grade`` grades each.

The process is forked first, so that its fork server starts while the course is read here; a submission
that kills it (its memory, say) is graded once more alone, and then its record says so
(``run.executors``): this process, which prints the record, never holds the submission.
"""
from __future__ import annotations

from ..intake.expected import notebooks_of
from ..records import Record
from ..sandbox.limits import Limits
from .executors import drain
from .hardened import job_for
from .local_pool import LocalPool


def check_submission(path, *, course=None, student_id=None, assignment: str | None = None,
                     limits: Limits | None = None) -> Record:
    """The record of the submission at ``path`` (``hardened.job_for`` says what the arguments default to);
    ValueError when ``path`` is not a submission."""
    executor = LocalPool(1, planned=True).start()
    try:
        job = job_for(path, course=course, student_id=student_id, assignment=assignment, limits=limits)
        notebooks_of(job.view)                              # a course that cannot grade stops here (CourseError)
        done = []
        drain(executor, [job], lambda job, graded: done.append(graded.record))
        return done[0]
    finally:
        executor.close()
