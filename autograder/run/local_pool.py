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

from .lifecycle import die_with_parent, ignore_terminal_interrupt

ATTEMPTS = 2     # a submission whose grading process dies this many times gets a record for review


def run_pool(task, items: list[str], finish, give_up, *, workers: int, inherited: tuple[int, ...] = ()) -> None:
    """``finish(task(item))`` for every item, in ``workers`` forked processes; an item whose worker
    died ``ATTEMPTS`` times gets ``finish(give_up(item))``."""
    attempts = {item: 0 for item in items}
    pending = list(items)
    while pending:
        pending = _round(task, pending, attempts, finish, give_up, workers, inherited)


def _round(task, pending, attempts, finish, give_up, workers, inherited) -> list[str]:
    """Run ``pending``; if the pool breaks, return the items to retry."""
    retry = []
    pool = ProcessPoolExecutor(max_workers=min(workers, len(pending)), mp_context=get_context("fork"),
                               initializer=worker_start, initargs=(os.getpid(), tuple(inherited)))
    try:
        futures = {pool.submit(task, item): item for item in pending}
        for fut in as_completed(futures):
            item = futures[fut]
            try:
                result = fut.result()
            except BrokenProcessPool:
                attempts[item] += 1
                if attempts[item] < ATTEMPTS:
                    retry.append(item)
                    continue
                result = give_up(item)
            finish(result)
    except BaseException:
        kill_workers(pool)                  # stop now: do not wait for submissions in progress
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return retry


def worker_start(parent: int, inherited: tuple[int, ...]) -> None:
    """The initializer of every pool worker (runs in the worker right after the fork)."""
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
