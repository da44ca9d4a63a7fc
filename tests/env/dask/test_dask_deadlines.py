"""A worker that stops reading, and a grading that stalls, graded on a Dask cluster (issue 35, item 1).

The submission whose sandboxed worker stops reading before a cell of 2 MiB is graded on Dask like any other:
its worker is ended at the deadline, the submission flagged and the class graded. Where a deadline is missing
(a Dask worker whose grading has the old blocking write), the executor's watchdog cancels the task past its
bound, restarts the Dask worker whose thread it holds, retries the job alone and charges it; the classmate
is graded. Each hung on the code without the fix (``pytest.mark.timeout`` ends it as a failure)."""
from __future__ import annotations

import pytest

from autograder.course.view import read_course
from autograder.run.batch import grade_batch, student_job
from autograder.run.dask import DaskCluster
from autograder.run.executors import drain
from autograder.sandbox.limits import Limits
from batch_helpers import make_class, records
from deaf_workers import DEAF, SHORT, ended_by_deadline, grade_with_blocking_writes, plant

distributed = pytest.importorskip("distributed")
A = "ch04_attention"
def _stalled_only(job) -> float | None:
    """The watchdog's bound for the stalled student (8 s); none for the classmate, whose grading takes as
    long as this loaded machine makes it."""
    return 8.0 if job.student == DEAF else None


PATIENT = Limits(cell_seconds=2, call_seconds=2, total_seconds=10, spawns=2, overrun_seconds=600)


@pytest.fixture
def deaf_class(tmp_path):
    course = make_class(tmp_path, ["correct-1"], custom={DEAF: {}})
    plant(course / "submitted" / DEAF / A)
    return course


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                  host="127.0.0.1") as cluster:
        yield cluster


@pytest.mark.timeout(240)
def test_a_worker_that_stops_reading_is_ended_on_dask_and_the_class_graded(deaf_class, tmp_path, cluster):
    grade_batch(course=deaf_class, out=tmp_path / "out", scheduler=cluster.scheduler_address, progress=False,
                outputs=False, limits=SHORT.to_dict())
    got = records(tmp_path / "out")
    assert got["correct-1"]["total"] == 28 and not got["correct-1"]["needs_review"]
    assert got[DEAF]["needs_review"] and ended_by_deadline(got[DEAF]["integrity"]), got[DEAF]["integrity"]


@pytest.mark.timeout(300)
def test_the_dask_watchdog_ends_a_stalled_task_charges_it_and_grades_the_class(deaf_class, cluster):
    view = read_course(deaf_class, A)
    jobs = [student_job(view, s, limits=PATIENT.to_dict()) for s in (DEAF, "correct-1")]
    executor, done = DaskCluster(cluster.scheduler_address, task=grade_with_blocking_writes, bound=_stalled_only), {}
    try:
        drain(executor, jobs, lambda job, graded: done.update({job.student: graded.record}))
    finally:
        executor.close()
    assert done["correct-1"].total == 28 and not done["correct-1"].needs_review
    deaf = done[DEAF]
    assert deaf.needs_review and deaf.total == 0
    assert "died twice" in deaf.integrity[0] and "watchdog ended its grading" in deaf.integrity[0], deaf.integrity
