"""One grading run at a time per output folder.

The run's main process holds an exclusive ``flock`` on ``OUT/.grading-run.lock``
(the file names the run's pid and start time). The kernel drops the lock when
every descriptor of it is closed, so a killed run never leaves a stale lock.
The gradebook writer inherits the descriptor: while any writer of a run is
alive, no newer run can start on the folder, and before it commits the writer
checks that the lock file in the folder is still the one it holds
(``belongs_to_run``), so it never writes beside a newer run's outputs.
"""
from __future__ import annotations

import fcntl
import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path

LOCK_NAME = ".grading-run.lock"


class RunLocked(ValueError):
    """Another grading run holds the output folder."""


class RunLock:
    """The output folder's lock, held from ``acquire()`` until ``release()``."""

    def __init__(self, out: Path):
        self.out = Path(out)
        self.path = self.out / LOCK_NAME
        self.fd: int | None = None

    def acquire(self, wait_for_orphans: float = 5.0) -> "RunLock":
        self.out.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        if not _lock(fd, self.path, wait_for_orphans):
            holder = _read_holder(fd)
            os.close(fd)
            raise RunLocked(f"another grading run (pid {holder.get('pid', '?')}, started at "
                            f"{holder.get('started', '?')}) is writing to {self.out}/; wait for it or stop it")
        os.ftruncate(fd, 0)
        started = datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "started": started}).encode(), 0)
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)                    # the file stays: removing it would race a waiting run
            self.fd = None

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def _lock(fd: int, path: Path, wait_for_orphans: float) -> bool:
    """Take the lock; if its holder's main process is gone (its last children are being killed by
    the kernel), give them ``wait_for_orphans`` seconds to go."""
    deadline = time.monotonic() + wait_for_orphans
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if _alive(_read_holder(fd).get("pid")) or time.monotonic() > deadline:
                return False
            time.sleep(0.1)


def _read_holder(fd: int) -> dict:
    try:
        holder = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except ValueError:
        return {}
    return holder if isinstance(holder, dict) else {}


def _alive(pid) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return True                              # unknown holder: assume it is a live run
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def belongs_to_run(fd: int, path: Path) -> bool:
    """True while ``path`` is still the lock file that ``fd`` (an inherited, held lock) opened."""
    try:
        held, current = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (held.st_dev, held.st_ino) == (current.st_dev, current.st_ino)
