"""A worker that stops reading stalls no door (issue 35, item 1): ``grade`` in this process (the in-process
executor, as nbgrader's door grades) and in its grading processes (the local pool), and ``check``.

Each class holds a student whose notebook stops its worker reading (three ways, one a door) before a cell
of 2 MiB, and an honest classmate: the stalled worker is ended at its deadline, that submission graded as
far as it goes and flagged, the classmate graded in full. On the old code the grading thread blocked for
ever in a write (``pytest.mark.timeout`` ends it as a failure); with the old write and the watchdogs, a
watchdog ends it, which these tests refuse (``deaf_workers.ended_by_deadline``). ``watch``:
tests/watch/test_watch_deadlines.py; Dask: tests/env/dask/test_dask_deadlines.py; nbgrader's door:
tests/env/nbgrader/test_door_deadlines.py."""
from __future__ import annotations

import pytest

from autograder.course.view import read_course
from autograder.run.batch import grade_batch, student_job
from autograder.run.check import check_submission
from autograder.run.executors import InProcess, drain
from batch_helpers import gradebook_in, make_class, read_csv, records
from deaf_workers import DEAF, SHORT, ended_by_deadline, plant

A = "ch04_attention"
OTHERS = {"ex1_softmax", "ex1_attention", "ex3_memory", "ex4_cross"}      # the notebooks that read


def _deaf_class(tmp_path, stop: str, students=("correct-1",)):
    course = make_class(tmp_path, list(students), custom={DEAF: {}})
    plant(course / "submitted" / DEAF / A, stop)
    return course


def _assert_flagged_and_graded_as_far_as_it_goes(integrity, passed) -> None:
    """Its worker ended at the deadline (no watchdog had to act), its other notebooks graded."""
    assert ended_by_deadline(integrity) and any("ex2_causal_mask.ipynb" in line for line in integrity), integrity
    assert OTHERS <= set(passed)


@pytest.mark.timeout(120)
def test_grade_in_this_process_ends_the_worker_and_grades_the_class(tmp_path, server):
    course = _deaf_class(tmp_path, "signal-proof")
    view, done = read_course(course, A), {}
    jobs = [student_job(view, s, limits=SHORT.to_dict()) for s in (DEAF, "correct-1")]
    drain(InProcess(server), jobs, lambda job, graded: done.update({job.student: graded.record}))
    assert done["correct-1"].total == 28 and not done["correct-1"].needs_review
    deaf = done[DEAF]
    assert deaf.needs_review
    _assert_flagged_and_graded_as_far_as_it_goes(deaf.integrity, [c.grade_id for c in deaf.checks if c.passed])


@pytest.mark.timeout(240)
def test_grade_in_its_grading_process_ends_the_worker_and_writes_every_output(tmp_path):
    course, out = _deaf_class(tmp_path, "sleeps-in-read", ("correct-1", "no-scaling")), tmp_path / "out"
    grade_batch(course=course, out=out, workers=1, progress=False, limits=SHORT.to_dict(),
                gradebook_url=gradebook_in(out), create_gradebook=True)
    got = records(out)
    assert {s: got[s]["total"] for s in ("correct-1", "no-scaling")} == {"correct-1": 28, "no-scaling": 26}
    deaf = got[DEAF]
    assert deaf["needs_review"]
    _assert_flagged_and_graded_as_far_as_it_goes(deaf["integrity"], [c["grade_id"] for c in deaf["checks"]
                                                                     if c["passed"]])
    assert {row["student_id"] for row in read_csv(out / "grades.csv")} >= {DEAF, "correct-1", "no-scaling"}


@pytest.mark.timeout(180)
def test_check_ends_the_worker_and_says_so(tmp_path):
    course = _deaf_class(tmp_path, "reads-elsewhere", ())
    record = check_submission(course / "submitted" / DEAF / A, limits=SHORT)
    assert record.needs_review
    _assert_flagged_and_graded_as_far_as_it_goes(record.integrity, [c.grade_id for c in record.checks if c.passed])


def test_the_doors_sandbox_limits_are_checked_by_name():
    from autograder.run.autograde import _limits
    assert _limits({"cell_seconds": 3}) == {"cell_seconds": 3} and _limits({}) is None
    with pytest.raises(ValueError, match="c.SandboxedExecute.limits names 'cel_seconds', which is not a sandbox"):
        _limits({"cel_seconds": 3})
