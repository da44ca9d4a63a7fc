"""Where jobs are graded: one interface, three executors, one blame policy.

An executor takes jobs (``submit``, ``submit_all``) and hands back what is done (``finished``):
``InProcess`` grades in this process (nbgrader's own door, which nbgrader runs in its process);
``run.local_pool.LocalPool`` in forked grading processes that die with the run; ``run.dask.DaskCluster``
on a Dask distributed cluster. Each runs ``task`` (``run.grader.grade`` unless told otherwise) on each job.

The blame policy is ``Executor``'s, the same for every executor that can lose work: a job lost with a
dying process or worker is retried alone, with nothing else of the run in flight, and is charged
only when it is lost again (``give_up``: a failed record with ``job.died_text``). Work a process had not
taken yet is queued again, uncharged: a death is charged to its cause only (a killed grading process
once cost all 8 honest classmates queued behind it their grade; a dying Dask worker once cost an honest
classmate 0/28).

The watchdog is the executors' too: an executor that waits for its jobs (``finished(wait=True)``, in the
batch's drain and ``watch``'s loop) wakes at least every ``WATCH_SECONDS`` and ends the grading of a job
taken longer ago than its bound (``bound(job)``: ``Limits.grading_bound``) as if its process had died:
lost, retried alone, charged when it overruns again. No grading can stall the run (issue 35, item 1).
"""
from __future__ import annotations

from collections import deque
from . import grader
from .job import Graded, died_text, failed

ATTEMPTS = 2     # a job lost this many times, the last time alone, is given up (a record for review)
WATCH_SECONDS = 1.0     # a waiting executor looks at least this often for a grading past its bound


def job_bound(job) -> float | None:
    """Seconds the grading of ``job`` may take before the watchdog ends it; None for an item that is not a
    grading job (``local_pool.run_pool``'s)."""
    limits = getattr(job, "limits", None)
    return limits.grading_bound(getattr(job, "visible", False)) if limits is not None else None


def overran_text(bound: float) -> str:
    """Why a job was lost to the watchdog (``job.died_text`` says it with the rest)."""
    return (f"it was still being graded {bound:g} s after it started, past its time budget: the watchdog ended "
            "its grading")


def drain(executor, jobs, finish) -> None:
    """Grade ``jobs`` on ``executor``: ``finish(job, result)`` for each, as each is done."""
    executor.submit_all(jobs)
    while True:
        done = executor.finished(wait=True)
        if not done and not executor.busy:
            return
        for job, result in done:
            finish(job, result)


class Executor:
    """The queue and the blame policy of an executor that may lose work; ``_start`` and ``_collect`` are
    where it runs. ``task(job)`` grades a job; ``give_up(job, why)`` is the result of one lost twice."""
    serial = False           # jobs are graded one at a time, in order (a caller may wait for each)

    def __init__(self, task=None, give_up=None, bound=None):
        self.task, self.give_up, self.bound = task or _grade, give_up or _died, bound or job_bound
        self.queue: deque = deque()          # jobs to grade, uncharged
        self.suspects: deque = deque()       # jobs lost once: each is retried alone
        self.inflight: dict = {}             # the executor's handle of a job in flight -> the job
        self.alone = False                   # the job in flight is a suspect, alone
        self.lost_times: dict = {}           # job -> how often its process died while it was taken
        self.done: list = []

    def submit(self, job) -> None:
        self.submit_all([job])

    def submit_all(self, jobs) -> None:
        self.queue.extend(jobs)
        self._pump()

    @property
    def busy(self) -> int:
        """Jobs submitted and not yet handed back by ``finished``."""
        return len(self.queue) + len(self.suspects) + len(self.inflight) + len(self.done)

    def finished(self, wait: bool = False) -> list:
        """(job, result) for each job done since the last call; with ``wait``, at least one unless none
        is left in flight (a lost job is queued again, so the list may still be empty)."""
        if self.inflight and not (self.done and wait):
            self._collect(block=wait and not self.done)
        self._pump()
        done, self.done = self.done, []
        return done

    def close(self) -> None:
        """End whatever is in flight now (a stop: nothing waits for a submission in progress)."""

    # --- the policy ----------------------------------------------------------------------------
    def _pump(self) -> None:
        """Start what may start: a suspect only when nothing else is in flight; new work only when no
        suspect is waiting for its turn alone."""
        if self.inflight and (self.alone or self.suspects):
            return
        if self.suspects and not self.inflight:
            self.alone = True
            self._start([self.suspects.popleft()])
        elif self.queue and not self.suspects:
            self.alone = False
            jobs, self.queue = list(self.queue), deque()
            self._start(jobs)

    def _finish(self, job, result) -> None:
        self.done.append((job, result))

    def _lost(self, job, taken: bool, why: str) -> None:
        """``job`` was in flight when its process died; ``taken``: a process had started it."""
        if not taken:
            self.queue.appendleft(job)
            return
        self.lost_times[job] = self.lost_times.get(job, 0) + 1
        if self.lost_times[job] >= ATTEMPTS:
            self._finish(job, self.give_up(job, why))
        else:
            self.suspects.append(job)

    # --- where it runs (each executor's own) -----------------------------------------------------
    def _start(self, jobs: list) -> None:
        raise NotImplementedError

    def _collect(self, block: bool) -> None:
        raise NotImplementedError


class InProcess(Executor):
    """Grades each job in this process as it is submitted (nbgrader's door: nbgrader runs it in its own
    process, which reads every notebook itself before our step). Nothing is lost that the process survives.
    With no process of its own to end, its watchdog is each submission's (``hardened._side_by_side``)."""
    serial = True

    def __init__(self, server=None, task=None):
        super().__init__(task)
        self.server = server

    def _start(self, jobs: list) -> None:
        for job in jobs:
            self._finish(job, self.task(job) if self.server is None else self.task(job, self.server))

    def _collect(self, block: bool) -> None:
        pass


def _grade(job, *args, **options):
    return grader.grade(job, *args, **options)      # (read when called: a test puts its own)


def _died(job, why: str):
    return Graded(failed(job, died_text(why)))
