"""Ready workers, started ahead, and ended workers, cleaned up behind: both off the grading path.

Each notebook of a submission runs in a worker of its own (rule 1), so a submission starts and
ends four workers. Starting one (fork, cgroup, namespaces, tmpfs, Landlock, seccomp, the first
reply) takes 15-35 ms and ending one (kill, wait for its cgroup to empty, remove its folder)
5-10 ms; on the grading path that was a third of a submission's time. A ``WorkerPool`` keeps up
to ``size`` workers started and idle, so that a notebook takes one that is ready, and a keeper
thread starts the next ones and cleans up ended ones while the grader is busy with the rubric.

The keeper only asks the fork server for a worker and sends it its first request; the worker then
puts its layers on by itself, side by side with the others being started, and its first reply is
read when a notebook takes it. A ready worker has run nothing: it is exactly the worker a notebook
would have started itself, only earlier (same layers, same limits; a worker whose limits differ
is never handed out). An idle worker that is no longer ready (its socket readable after its first
reply: it died or spoke unasked) is cleaned up, never handed out. One that gives no first reply when
taken is cleaned up too, and the pool then starts no more (its starts fail): that take, and each one
after it, starts its own worker, which says why it could not. Ready workers nobody took for
``idle_seconds`` are ended, so the pool never outlives a batch by more than that; ``close`` ends all of them and finishes every clean-up
before it returns. An ended worker is SIGKILLed at once by ``retire`` (every process of its PID
namespace dies with it); only waiting for the kernel to empty its cgroup and removing its folder
happen behind.
"""
from __future__ import annotations

import threading
import time
from collections import deque

from .handle import WorkerDied, WorkerHandle
from .limits import Limits
from .rpc import readable


class WorkerPool:
    def __init__(self, server, size: int, idle_seconds: float = 5.0):
        self.server, self.size, self.idle_seconds = server, size, idle_seconds
        self.ready: list[WorkerHandle] = []
        self.ended: deque[WorkerHandle] = deque()
        self.wanted: Limits | None = None            # the limits of the last worker asked for
        self.last_take = time.monotonic()
        self.closed = False
        self.left: int | None = None                 # takes still expected (``expect``); None: no end known
        self.cv = threading.Condition()
        self.thread: threading.Thread | None = None

    def take(self, limits: Limits) -> WorkerHandle:
        """A started worker with these limits: a ready one if there is one, else one started now."""
        with self.cv:
            if self.closed:
                raise RuntimeError("the sandbox fork server is closed")
            self.wanted, self.last_take = limits, time.monotonic()
            if self.left:
                self.left -= 1
            handle = self._ready_one(limits)
            self._wake()
        if handle is not None:
            try:
                handle.greet()                        # its first reply: it is up, under every layer
            except WorkerDied:                        # it did not come up (greet cleaned it up): the keeper's
                with self.cv:                         # starts fail, only later seen; as in ``_start``, the
                    self.size = 0                     # pool stops starting workers (its ready ones end)
                    self._wake()
            else:
                if _quiet(handle):
                    return handle
                self.retire(handle)                   # it spoke unasked: never handed out
        return WorkerHandle(self.server, limits)      # the notebook's own start, which says why it failed

    def expect(self, takes: int | None) -> None:
        """How many more workers will be taken (a batch knows: four per submission left); the pool then
        starts no worker nobody will take, and ends ready ones beyond that (0, when a batch is done:
        now, not after ``idle_seconds``). None: no end known (the default)."""
        with self.cv:
            self.left = takes
            self._wake()

    def retire(self, handle: WorkerHandle) -> None:
        """Kill ``handle``'s worker now; wait for its processes and remove its files in the keeper."""
        handle.kill_now()
        with self.cv:
            if not self.closed:
                self.ended.append(handle)
                self._wake()
                return
        handle.cleanup()

    def close(self) -> None:
        """End every ready worker and finish every clean-up (before the fork server hangs up)."""
        with self.cv:
            self.closed = True
            self.cv.notify_all()
            thread = self.thread
        if thread is not None:
            thread.join(timeout=30)
        with self.cv:
            left = [*self.ready, *self.ended]
            self.ready.clear()
            self.ended.clear()
        for handle in left:
            handle.cleanup()

    # --- under the lock ----------------------------------------------------------------------
    def _ready_one(self, limits: Limits) -> WorkerHandle | None:
        for handle in list(self.ready):
            self.ready.remove(handle)
            if handle.limits == limits and (handle.status is None or _quiet(handle)):
                return handle                          # not greeted yet: its first reply may be waiting
            self.ended.append(handle)                 # other limits, or no longer ready: end it
        return None

    def _wake(self) -> None:
        if self.thread is None and (self.size > 0 or self.ended or self.ready):
            self.thread = threading.Thread(target=self._keep, name="autograder-worker-pool", daemon=True)
            self.thread.start()
        self.cv.notify_all()

    def _job(self):
        """What the keeper does next: ('end', handle), ('start', limits), or ('wait', seconds)."""
        idle = time.monotonic() - self.last_take
        size = self.size if self.left is None else min(self.size, self.left)
        if self.wanted is not None and len(self.ready) < size and idle < self.idle_seconds:
            return "start", self.wanted               # first: a start only asks, the worker sets itself up
        if self.ended:
            return "end", self.ended.popleft()
        if self.ready and (idle >= self.idle_seconds or len(self.ready) > size):
            return "end", self.ready.pop()
        return "wait", (self.idle_seconds - idle) if self.ready else None

    # --- the keeper thread ---------------------------------------------------------------------
    def _keep(self) -> None:
        while True:
            with self.cv:
                if self.closed:
                    return
                job, arg = self._job()
                if job == "wait":
                    self.cv.wait(timeout=arg)
                    continue
            if job == "end":
                arg.cleanup()
            else:
                self._start(arg)

    def _start(self, limits: Limits) -> None:
        """Start one ready worker. If the fork server cannot, the pool stops starting workers (each
        notebook then starts its own, and reports why it could not) and only cleans up."""
        try:
            handle = WorkerHandle(self.server, limits, greet=False)
        except (RuntimeError, WorkerDied, OSError):
            with self.cv:
                self.size = 0
            return
        with self.cv:
            if self.closed or limits != self.wanted:
                self.ended.append(handle)
            else:
                self.ready.append(handle)


def _quiet(handle: WorkerHandle) -> bool:
    """An idle worker sends nothing: a readable socket means it ended (or broke the protocol)."""
    try:
        return not readable(handle.sock)
    except (OSError, ValueError):
        return False
