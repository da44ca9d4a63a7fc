"""The local process pool of a batch: forked workers that end with the run, however it ends.

Each worker, first thing after the fork, asks to die with the run's main
process, leaves Ctrl-C to the main process and closes the descriptors of the
run it inherited but must not hold (the output-folder lock, the gradebook
writer's pipes). If the run stops (a signal, an output error) the workers are
killed at once rather than left to finish their submissions; a killed worker's
fork server sees its control socket close and ends its sandboxed workers.
"""
from __future__ import annotations

import os
import signal
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context

from ..lifecycle import die_with_parent, ignore_terminal_interrupt

ATTEMPTS = 2     # a submission whose grading process dies this many times, graded alone, gets a record for review
_STARTED = None  # in a worker: the round's shared flags, one per item, set when the worker takes it


def run_pool(task, items: list[str], finish, give_up, *, workers: int, inherited: tuple[int, ...] = ()) -> None:
    """``finish(task(item))`` for every item, in ``workers`` forked processes.

    When a worker dies, the pool breaks and every unfinished item with it; only the items a worker had
    taken are suspects, and each is graded again alone, so that a death is charged to its cause only:
    an item whose worker died ``ATTEMPTS`` times on it alone gets ``finish(give_up(item))``. Items no
    worker had taken go back in the queue, uncharged (a killed grading process once cost all 8 honest
    classmates queued behind it their grade).
    """
    attempts = {item: 0 for item in items}
    pending, suspects = list(items), []
    while pending or suspects:
        if suspects:
            item = suspects.pop(0)
            if _round(task, [item], finish, 1, inherited):       # it broke a pool of its own
                suspects[:0] = _charged([item], attempts, finish, give_up)
            continue
        unfinished = _round(task, pending, finish, workers, inherited)
        suspects = [item for item, taken in unfinished if taken]
        pending = [item for item, taken in unfinished if not taken]
        if pending and not suspects:                    # the pool broke before any worker took an item
            pending = _charged(pending, attempts, finish, give_up)


def _charged(items, attempts, finish, give_up) -> list[str]:
    """Charge each item a death; those with ``ATTEMPTS`` get ``give_up``; return the others."""
    left = []
    for item in items:
        attempts[item] += 1
        if attempts[item] < ATTEMPTS:
            left.append(item)
        else:
            finish(give_up(item))
    return left


def _round(task, pending, finish, workers, inherited) -> list[tuple[str, bool]]:
    """Run ``pending``; if the pool breaks, return each unfinished item with whether a worker had taken it."""
    started = get_context("fork").Array("b", len(pending), lock=False)
    unfinished = []
    pool = ProcessPoolExecutor(max_workers=min(workers, len(pending)), mp_context=get_context("fork"),
                               initializer=worker_start, initargs=(os.getpid(), tuple(inherited), started))
    try:
        futures = {pool.submit(_tracked, task, i, item): (i, item) for i, item in enumerate(pending)}
        for fut in as_completed(futures):
            i, item = futures[fut]
            try:
                result = fut.result()
            except BrokenProcessPool:
                unfinished.append((i, item))
                continue
            finish(result)
    except BaseException:
        kill_workers(pool)                  # stop now: do not wait for submissions in progress
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return [(item, bool(started[i])) for i, item in sorted(unfinished)]


def _tracked(task, index: int, item):
    """In a worker: mark ``item`` taken (the flag outlives this process), then run it."""
    _STARTED[index] = 1
    return task(item)


def worker_start(parent: int, inherited: tuple[int, ...], started=None) -> None:
    """The initializer of every pool worker (runs in the worker right after the fork)."""
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


def kill_workers(pool: ProcessPoolExecutor) -> None:
    """SIGKILL every worker of ``pool`` (Python 3.14 has ``pool.kill_workers()``)."""
    if hasattr(pool, "kill_workers"):
        pool.kill_workers()
        return
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            proc.kill()
        except (OSError, ValueError):
            pass
