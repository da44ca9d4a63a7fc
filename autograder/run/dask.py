"""The Dask executor: jobs graded on a Dask distributed cluster (``--scheduler``), with the executors'
blame policy. The submissions and the course must be readable at the same paths on its workers.

Dask itself runs a task again when its worker dies, up to the scheduler's ``allowed-failures``; a task
still lost after that (``KilledWorker``: every worker it ran on died) may have shared a worker with the
submission that killed it, so it is a suspect: retried with nothing else of the run in flight, and
charged only if it is lost again. A lost scheduler stops the run (``SchedulerLost``), keeping what is
written. The watchdog: a task its worker has been running longer than its job's bound (the workers are asked
what they run, at most once a ``WATCH_SECONDS``: a task assigned to a worker may still wait there behind
another) is cancelled, the worker that holds it restarted (its thread is never freed otherwise; Dask runs
its other tasks again), and the job lost to it, as to a death.
"""
from __future__ import annotations

import logging
import secrets
import time
from contextlib import contextmanager

from ..records import name_digest
from .executors import WATCH_SECONDS, Executor, overran_text
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

    def __init__(self, scheduler: str, key=None, task=None, give_up=None, bound=None):
        super().__init__(task, give_up, bound)
        self.key = key or dask_key
        try:
            from distributed import Client
        except ImportError:
            raise RuntimeError("--scheduler needs Dask distributed: pip install 'attention-course[dask]'") from None
        self.scheduler = scheduler
        self.quiet = _quiet("distributed", "tornado", "asyncio")
        self.quiet.__enter__()
        self.client = Client(scheduler)
        self.run = secrets.token_hex(4)        # two runs on one cluster never share a task's key
        self.tries: dict = {}
        self.running: dict = {}                # future -> when the scheduler was first seen running it
        self.looked = 0.0                      # when the watchdog last asked the scheduler

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

    def _collect(self, block: bool) -> None:
        from distributed import KilledWorker
        gone, why = [], None
        for fut in self._ready(block):
            job = self.inflight.pop(fut)
            self.running.pop(fut, None)
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

    def _ready(self, block: bool) -> list:
        """The futures done; with ``block`` at least one unless the watchdog gave a job up (or none is left),
        the watchdog looking every ``WATCH_SECONDS``."""
        from distributed import wait
        while True:
            done = [f for f in self.inflight if f.done()]
            if done or self._watchdog() or not block or not self.inflight:
                return done
            try:
                wait(list(self.inflight), timeout=WATCH_SECONDS, return_when="FIRST_COMPLETED")
            except Exception:  # noqa: BLE001 - a timeout, or futures cancelled (a scheduler lost): done, seen above
                pass

    def _watchdog(self) -> bool:
        """Give up every job whose task a worker has run longer than its bound (at most one look a
        ``WATCH_SECONDS``); whether one was."""
        now = time.monotonic()
        if now - self.looked < WATCH_SECONDS or all(self.bound(job) is None for job in self.inflight.values()):
            return False
        self.looked, where = now, {}
        try:
            for address, keys in self.client.run(_executing, on_error="ignore").items():
                where.update(dict.fromkeys(keys if isinstance(keys, list) else (), address))
        except Exception:  # noqa: BLE001 - a scheduler gone is seen when the futures fail
            return False
        over = []
        for fut, job in self.inflight.items():
            since = self.running.setdefault(fut, now) if str(fut.key) in where else self.running.pop(fut, None)
            bound = self.bound(job)
            if since is not None and bound is not None and now - since > bound:
                over.append((fut, job, bound))
        for fut, job, bound in over:
            self._give_up(fut, job, bound, where.get(str(fut.key)))
        return bool(over)

    def _give_up(self, fut, job, bound: float, address: str | None) -> None:
        """Cancel ``fut`` (so Dask runs it nowhere else), restart the worker whose thread it holds, and
        count the job lost to the watchdog."""
        del self.inflight[fut]
        self.running.pop(fut, None)
        try:
            fut.cancel()
            if address:
                self.client.restart_workers([address], timeout=60, raise_for_error=False)
        except Exception:  # noqa: BLE001 - a worker that cannot restart keeps a thread; the run goes on
            pass
        self._lost(job, True, overran_text(bound))


def _executing(dask_worker) -> list[str]:
    """On a Dask worker (``Client.run``): the keys of the tasks it is running now."""
    return [str(ts.key) for ts in dask_worker.state.executing]


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
