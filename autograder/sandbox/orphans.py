"""The fork server as child subreaper: what a student started and left behind is adopted, and ended.

A worker in a PID namespace takes everything it started with it when it ends. Where a worker has none (a
grader that is not root, on a machine without unprivileged user namespaces) a process the student started
that leaves its session (``setsid``, a double fork) or its process group is not ended with the worker. The
fork server is therefore the child subreaper of its workers (``PR_SET_CHILD_SUBREAPER``): such a process,
orphaned when its parent ends (at the latest when its worker is killed), becomes the fork server's child,
not init's, and ``Orphans.sweep`` ends every child of the fork server that is not one of its live workers.
The fork server sweeps every ``SWEEP_SECONDS`` and as it ends, so nothing outlives its worker by longer.

Each pid is signalled through a pidfd opened while the process is still the fork server's child, never a
bare pid that may already be another process's.
"""
from __future__ import annotations

import ctypes
import os
import select
import signal
import time

PR_SET_CHILD_SUBREAPER = 36
SWEEP_SECONDS = 0.5
_libc = ctypes.CDLL(None, use_errno=True)


def become_subreaper() -> bool:
    """Orphans below this process are re-parented to it rather than to init."""
    return hasattr(_libc, "prctl") and _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


class Orphans:
    """The workers this fork server started (pid -> pidfd); every other child of it is an orphan."""

    def __init__(self):
        self.workers: dict[int, int | None] = {}

    def started(self, pid: int) -> None:
        try:
            self.workers[pid] = os.pidfd_open(pid)
        except (AttributeError, OSError):
            self.workers[pid] = None

    def sweep(self) -> list[int]:
        """SIGKILL every child that is not a live worker; returns their pids."""
        self._forget_ended()
        ended = []
        for pid in children():
            if pid not in self.workers and _kill_child(pid):
                ended.append(pid)
        return ended

    def _forget_ended(self) -> None:
        for pid, fd in list(self.workers.items()):
            if fd is None and not os.path.exists(f"/proc/{pid}") or fd is not None and _ended(fd):
                if fd is not None:
                    os.close(fd)
                del self.workers[pid]


def end_children(timeout: float) -> None:
    """As the fork server ends: SIGKILL every child, workers included, and what their ends orphan, until none
    is left (at most ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = children()
        if not found:
            return
        for pid in found:
            _kill_child(pid)
        time.sleep(0.005)


def children() -> list[int]:
    """This process's children (``/proc/self/task/*/children``; none where the kernel does not list them)."""
    found = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children") as f:
                found += [int(pid) for pid in f.read().split()]
        except (OSError, ValueError):
            continue
    return found


def _ended(pidfd: int) -> bool:
    return bool(select.select([pidfd], [], [], 0)[0])


def _kill_child(pid: int) -> bool:
    """SIGKILL ``pid`` if it is still this process's child, through a pidfd opened first."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return False
    try:
        if _parent(pid) != os.getpid():
            return False
        signal.pidfd_send_signal(fd, signal.SIGKILL)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None
