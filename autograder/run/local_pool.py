"""The local executor: forked grading processes that end with the run, however it ends.

Each grading process, first thing after the fork, asks to die with the run's main process, leaves
Ctrl-C to the main process, closes the descriptors of the run it inherited but must not hold (the
output-folder lock, the gradebook writer's pipes) and starts its sandbox fork server ahead. If the
run stops (a signal, an output error) the processes are killed at once rather than left to finish
their submissions; a killed process's fork server sees its control socket close and ends its
sandboxed workers. The run's own process only hands out jobs and collects records, so a submission
that exhausts a grading process (its memory, say) costs that process, never the run.

When a process dies, the pool breaks and every unfinished job with it; a shared flag per job says
which ones a process had started (and when): only those are suspects (``executors.Executor``'s policy), the
others are queued again, uncharged. The watchdog kills the processes when a job was started longer ago
than its bound: that job is lost to it, and the others as to any death.
"""
from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context

from .executors import ATTEMPTS, WATCH_SECONDS, Executor, drain, overran_text  # noqa: F401 - ATTEMPTS: as tests read it
from ..lifecycle import die_with_parent, ignore_terminal_interrupt
from .server import SERVER

SLOTS = 1 << 16      # jobs one pool can take (its shared flags); then a new pool is started
_STARTED = None      # in a grading process: the pool's shared flags, one per job: when it took the job (monotonic)
LOST = "a local grading process ended while grading it"


class LocalPool(Executor):
    """``workers`` forked grading processes. ``planned``: every job there will be is submitted at once
    (a batch, ``check``): a process of a pool of one is told how many it still grades after each (its fork
    server then starts no worker nobody takes). ``inherited``: descriptors the processes must close."""

    def __init__(self, workers: int = 1, *, planned: bool = False, inherited: tuple[int, ...] = (),
                 task=None, give_up=None, sandbox: bool = True, bound=None):
        super().__init__(task, give_up, bound)
        self.workers, self.planned, self.inherited = workers, planned, tuple(inherited)
        self.sandbox = sandbox                # each process starts its fork server ahead
        self.serial = workers == 1
        self.pool = self.started = None
        self.slot = 0
        self.overran: dict[int, str] = {}     # slot -> why the watchdog ended the job's process

    def start(self) -> LocalPool:
        """Fork the grading processes now (each starts its fork server): ready before the first job."""
        self._pool().submit(_ready)
        return self

    def close(self) -> None:
        pool, self.pool = self.pool, None
        if pool is None:
            return
        if self.inflight:
            kill_workers(pool)                 # stop now: do not wait for submissions in progress
        pool.shutdown(wait=True, cancel_futures=True)

    def _pool(self) -> ProcessPoolExecutor:
        if self.pool is None or getattr(self.pool, "_broken", False) or self.slot >= SLOTS:
            self.close()
            if self.sandbox:
                _imported_before_fork()
            self.started, self.slot, self.overran = get_context("fork").Array("d", SLOTS, lock=False), 0, {}
            self.pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=get_context("fork"),
                                            initializer=worker_start,
                                            initargs=(os.getpid(), self.inherited, self.started, self.sandbox))
        return self.pool

    def _start(self, jobs: list) -> None:
        pool = self._pool()
        room = SLOTS - self.slot
        jobs, later = jobs[:room], jobs[room:]
        self.queue.extendleft(reversed(later))        # taken once this pool is done and replaced
        for i, job in enumerate(jobs):
            ahead = len(jobs) - 1 - i + len(later) if self.planned and self.workers == 1 else None
            fut = pool.submit(_tracked, self.task, self.slot, job, ahead)
            self.inflight[fut] = (self.slot, job)
            self.slot += 1

    def _collect(self, block: bool) -> None:
        ready = self._ready(block)
        broken = [f for f in ready if isinstance(f.exception(), BrokenProcessPool)]
        if broken:                                     # every job in flight fails with it: collect them all
            wait(list(self.inflight))
            ready = list(self.inflight)
        lost = []
        for fut in ready:
            slot, job = self.inflight.pop(fut)
            if isinstance(fut.exception(), BrokenProcessPool):
                lost.append((slot, job))
            else:
                self._finish(job, fut.result())
        taken = [bool(self.started[slot]) for slot, _ in lost]
        if lost and not any(taken):                    # the pool broke before any process took a job
            taken = [True] * len(lost)
        for (slot, job), was_taken in zip(lost, taken):
            self._lost(job, was_taken, self.overran.pop(slot, LOST))

    def _ready(self, block: bool) -> set:
        """The futures done; with ``block`` at least one, the watchdog looking every ``WATCH_SECONDS``."""
        while True:
            ready, _ = wait(list(self.inflight), timeout=WATCH_SECONDS if block else 0, return_when=FIRST_COMPLETED)
            self._watchdog()
            if ready or not block:
                return ready

    def _watchdog(self) -> None:
        """Kill the processes if a job was taken longer ago than its bound: its future (and every other in
        flight) then fails as with any death, and the blame policy charges it."""
        now, over = time.monotonic(), False
        for fut, (slot, job) in self.inflight.items():
            taken, bound = self.started[slot], self.bound(job)
            if taken and bound is not None and now - taken > bound and not fut.done() and slot not in self.overran:
                self.overran[slot] = overran_text(bound)
                over = True
        if over:
            kill_workers(self.pool)


def run_pool(task, items: list, finish, give_up, *, workers: int, inherited: tuple[int, ...] = ()) -> None:
    """``finish(task(item))`` for every item, in ``workers`` forked processes, with the executors' blame
    policy: an item whose process died on it twice, the second time alone, gets ``finish(give_up(item))``."""
    pool = LocalPool(workers, inherited=inherited, task=task, give_up=lambda item, why: give_up(item),
                     sandbox=False)
    try:
        drain(pool, items, lambda item, result: finish(result))
    finally:
        pool.close()


def _imported_before_fork() -> None:
    """When another thread runs (a replacement pool, a test), what a grading process imports is imported
    here first: a module another thread is importing at the moment of the fork stays locked in the child
    for ever (that thread is not there), and the child hangs on its first import of it. A process with no
    other thread (``grade``, ``check`` and ``watch`` fork first thing) skips this, and its child imports
    what it needs while this process checks the course."""
    if threading.active_count() > 1:
        from ..gradebook import timestamps  # noqa: F401
        from ..outputs import autograded  # noqa: F401
        from ..sandbox import launch  # noqa: F401
        from . import grader, hardened, server, visible  # noqa: F401


def _ready() -> None:
    """The first job of a pool started ahead: nothing (the process is up, its fork server starting)."""


def _tracked(task, slot: int, job, ahead: int | None):
    """In a grading process: mark ``job`` taken, with the time (the flag outlives this process), then grade it."""
    _STARTED[slot] = time.monotonic()
    return task(job) if ahead is None else task(job, ahead=ahead)


def worker_start(parent: int, inherited: tuple[int, ...], started=None, sandbox: bool = False) -> None:
    """The initializer of every grading process (runs in it right after the fork)."""
    global _STARTED
    _STARTED = started
    die_with_parent(parent)
    ignore_terminal_interrupt()
    for sig in (signal.SIGTERM, signal.SIGHUP):      # the parent's stop handlers are not the worker's
        signal.signal(sig, signal.SIG_DFL)
    for fd in inherited:
        try:
            os.close(fd)
        except OSError:
            pass
    if sandbox:
        SERVER.launch_ahead()                         # ready (about a second) by the first submission


def kill_workers(pool: ProcessPoolExecutor) -> None:
    """SIGKILL every process of ``pool`` (Python 3.14 has ``pool.kill_workers()``)."""
    if hasattr(pool, "kill_workers"):
        pool.kill_workers()
        return
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            proc.kill()
        except (OSError, ValueError):
            pass
