"""A cgroup v1 memory controller group for a test: a process started in it (``enter``, as a ``preexec_fn``)
and its children are killed by the kernel when together they need more than its limit; ``peak`` is their
high-water mark. Needs root and a writable /sys/fs/cgroup/memory (``unavailable`` says why not)."""
from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

MEMORY = Path("/sys/fs/cgroup/memory")


def unavailable() -> str | None:
    if os.geteuid() != 0 or not os.access(MEMORY, os.W_OK):
        return "needs root and a writable cgroup v1 memory controller"
    return None


class MemoryCap:
    def __init__(self, limit: int):
        self.group = MEMORY / f"autograder-test-{uuid.uuid4().hex[:8]}"
        self.group.mkdir()
        (self.group / "memory.limit_in_bytes").write_text(str(limit))
        self.procs = str(self.group / "cgroup.procs")

    def enter(self) -> None:
        """In a child before it runs its command (``subprocess``'s ``preexec_fn``): join the group."""
        Path(self.procs).write_text(str(os.getpid()))

    def peak(self) -> int:
        return int((self.group / "memory.max_usage_in_bytes").read_text())

    def killed(self) -> int:
        """How often the kernel ended a process of the group for want of memory."""
        for line in (self.group / "memory.oom_control").read_text().splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0

    def close(self) -> None:
        for pid in (self.group / "cgroup.procs").read_text().split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        for _ in range(100):
            try:
                self.group.rmdir()
                return
            except OSError:
                time.sleep(0.1)
