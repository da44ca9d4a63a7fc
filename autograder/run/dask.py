"""The Dask executor: jobs graded on a Dask distributed cluster (``--scheduler``), with the executors'
blame policy. The submissions and the course must be readable at the same paths on its workers.

Dask itself runs a task again when its worker dies, up to the scheduler's ``allowed-failures``; a task
still lost after that (``KilledWorker``: every worker it ran on died) may have shared a worker with the
submission that killed it, so it is a suspect: retried with nothing else of the run in flight, and
charged only if it is lost again. A lost scheduler stops the run (``SchedulerLost``), keeping what is
written.
"""
from __future__ import annotations

import logging
import secrets
from contextlib import contextmanager

from ..records import name_digest
from .executors import Executor
from .job import Graded, failed, grader_failed


class SchedulerLost(RuntimeError):
    """The Dask scheduler went away mid-run: ``done`` of ``total`` records are complete in ``out``;
    ``jobs``: those whose results were lost with it (no longer in flight)."""
    out = None
    done = total = 0
    jobs: tuple = ()


def dask_key(name: str) -> str:
    """The start of the Dask keys of a job's tasks: a digest, since a name may hold any bytes of a folder
    name (one that is not UTF-8 cannot be sent to the scheduler: it lost the connection)."""
    return "grade-" + name_digest(name, 24)


class DaskCluster(Executor):
    """A client of the scheduler at ``scheduler``; ``close`` leaves the cluster as it was. ``key``: the start
    of the Dask keys of a job's tasks, from its name (``dask_key``); each try gets a key of its own."""

    def __init__(self, scheduler: str, key=None, task=None, give_up=None):
        super().__init__(task, give_up)
        self.key = key or dask_key
        try:
            from distributed import Client, as_completed
        except ImportError:
            raise RuntimeError("--scheduler needs Dask distributed: pip install 'attention-course[dask]'") from None
        self.scheduler = scheduler
        self.quiet = _quiet("distributed", "tornado", "asyncio")
        self.quiet.__enter__()
        self.client = Client(scheduler)
        self.completed = as_completed()
        self.run = secrets.token_hex(4)        # two runs on one cluster never share a task's key
        self.tries: dict = {}

    def close(self) -> None:
        if self.quiet is None:
            return
        try:
            for fut in list(self.inflight):
                fut.cancel()
            self.client.close()
        finally:
            self.quiet, quiet = None, self.quiet
            quiet.__exit__(None, None, None)

    def _start(self, jobs: list) -> None:
        for job in jobs:
            n = self.tries[job] = self.tries.get(job, 0) + 1
            fut = self.client.submit(self.task, job, pure=False, key=f"{self.key(job.name)}-{self.run}-{n}")
            self.inflight[fut] = job
            self.completed.add(fut)

    def _collect(self, block: bool) -> None:
        if not block and not self.completed.has_ready():
            return
        from distributed import KilledWorker
        gone, why = [], None
        for fut in self.completed.next_batch(block=True):
            job = self.inflight.pop(fut, None)
            if job is None:
                continue
            try:
                self._finish(job, fut.result())
            except KilledWorker as exc:          # its workers died: maybe its fault, maybe a classmate's
                self._lost(job, True, f"the last on a Dask worker: {type(exc).__name__}: {str(exc)[:300]}")
            except Exception as exc:  # noqa: BLE001 - grade never raises: this is the cluster's failure
                if self.client.status != "running" or "lost the connection" in str(exc):
                    gone.append(job)
                    why = why or f"{type(exc).__name__}: {str(exc)[:200]}"
                else:
                    self._finish(job, Graded(failed(job, grader_failed(exc))))
        if gone:
            lost = SchedulerLost(f"the Dask scheduler at {self.scheduler} was lost ({why})")
            lost.jobs = tuple(gone)
            raise lost


@contextmanager
def _quiet(*prefixes: str):
    """Dask's own log lines (a lost connection's tracebacks, from its loggers and tornado's) stay out of
    the run's output: the run says what happened itself."""
    named = [logging.getLogger(n) for n in list(logging.root.manager.loggerDict) if n.startswith(prefixes)]
    logs = {log: log.level for log in [*named, *map(logging.getLogger, prefixes)]}
    for log in logs:
        log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for log, level in logs.items():
            log.setLevel(level)
