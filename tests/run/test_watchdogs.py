"""The watchdogs (issue 35, item 1): no grading can stall the run, even where a deadline is missing.

Each exchange with a worker has a deadline (tests/sandbox/test_deadlines.py); these tests take one away, as
a grader bug would (the old blocking write, ``deaf_workers.blocking_send_all``, under a worker that stops
reading before a cell of 2 MiB), and show what ends the grading then: the submission's own watchdog (its
workers ended at its time budget plus ``Limits.overrun_seconds``, what was graded kept and flagged), and
the executors' (the grading process ended past ``Limits.grading_bound``, the submission charged, the class
graded). Each hung on the code without that watchdog (``pytest.mark.timeout`` ends it as a failure)."""
from __future__ import annotations

import pytest

from autograder.run.executors import drain
from autograder.run.hardened import grade_submission
from autograder.run.local_pool import LocalPool
from autograder.sandbox import rpc
from autograder.sandbox.limits import Limits
from batch_helpers import make_class
from deaf_workers import DEAF, blocking_send_all, grade_with_blocking_writes, plant

A = "ch04_attention"
OTHERS = {"ex1_softmax", "ex1_attention", "ex3_memory", "ex4_cross"}      # the notebooks that read


def _deaf_class(tmp_path, students=()):
    course = make_class(tmp_path, list(students), custom={DEAF: {}})
    plant(course / "submitted" / DEAF / A)
    return course


@pytest.mark.timeout(120)
def test_the_submissions_watchdog_ends_its_workers_and_keeps_what_was_graded(tmp_path, server, monkeypatch):
    """Graded in this process (nbgrader's door grades so): the notebook stalled in a write has its worker
    ended once the submission's time and overrun are spent; the other notebooks' grades are kept, and the
    record says what happened, for review."""
    monkeypatch.setattr(rpc, "send_all", blocking_send_all)
    course = _deaf_class(tmp_path)
    limits = Limits(cell_seconds=2, call_seconds=2, total_seconds=6, spawns=2, overrun_seconds=2)
    record = grade_submission(course / "submitted" / DEAF / A, course=course, server=server, limits=limits)
    assert record.needs_review
    assert any("ex2_causal_mask.ipynb was still running 2 s past" in e and "watchdog" in e for e in record.integrity)
    assert OTHERS <= {c.grade_id for c in record.checks if c.passed}
    assert not any(c.passed for c in record.checks if c.grade_id.startswith("ex2"))


def _jobs(course, students, limits: Limits) -> list:
    from autograder.course.view import read_course
    from autograder.run.batch import student_job
    view = read_course(course, A)
    return [student_job(view, s, limits=limits.to_dict()) for s in students]


# the submission's own watchdog waits (it would end the workers, and the write with them): the pool's acts
def _stalled_only(job) -> float | None:
    """The watchdog's bound for the stalled student (8 s); none for the classmate, whose grading takes as
    long as this loaded machine makes it."""
    return 8.0 if job.student == DEAF else None


PATIENT = Limits(cell_seconds=2, call_seconds=2, total_seconds=10, spawns=2, overrun_seconds=600)
DIED = "A grading process died twice on this submission, graded alone the second time"
OVERRAN = "was still being graded 8 s after it started, past its time budget: the watchdog ended its grading"


@pytest.mark.timeout(240)
def test_the_pools_watchdog_ends_a_stalled_grading_process_charges_it_and_grades_the_class(tmp_path):
    """The batch's drain (and ``check``'s): the grading process stalled in a write is killed past its job's
    bound, the job retried alone, stalls and is killed again, and charged; the classmate queued behind it
    in the same process is graded, uncharged."""
    course = _deaf_class(tmp_path, ["correct-1"])
    pool, done = LocalPool(1, planned=True, task=grade_with_blocking_writes, bound=_stalled_only), {}
    try:
        drain(pool, _jobs(course, [DEAF, "correct-1"], PATIENT), lambda job, graded: done.update({job.student: graded.record}))
    finally:
        pool.close()
    assert done["correct-1"].total == 28 and not done["correct-1"].needs_review
    deaf = done[DEAF]
    assert deaf.needs_review and deaf.total == 0
    assert DIED in deaf.integrity[0] and OVERRAN in deaf.integrity[0], deaf.integrity
