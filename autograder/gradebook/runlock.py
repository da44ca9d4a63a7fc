"""One grading run at a time per output folder and per gradebook.

The run's main process holds an exclusive ``flock`` on ``OUT/.grading-run.lock``
and, for a PostgreSQL gradebook, an advisory lock on the server (``pglock``); for a SQLite gradebook (the course's own, say, outside OUT), on
``.gradebook.db.grading-run.lock`` beside it; each file names the run's pid and
start time. The kernel drops a lock when every descriptor of it is closed, so a
killed run never leaves a stale lock. The gradebook writer inherits the
descriptors: while any writer of a run is alive, no newer run can start on the
folder or the gradebook, and before it commits the writer checks that each lock
file is still the one it holds (``belongs_to_run``), so it never writes after a
newer run started.
"""
from __future__ import annotations

import fcntl
import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path

from ..records import OutputError
from .holder import RunLocked, alive, locked  # noqa: F401 - RunLocked: the callers import it from here
from .timestamps import written_time
from .url import is_postgres, sqlite_path
from .pglock import ServerRunLock

LOCK_NAME = ".grading-run.lock"


class RunLock:
    """One lock file, held from ``acquire()`` until ``release()``; ``what`` it guards, for messages."""

    def __init__(self, path: Path, what: str, fix: str = "choose another folder", kind: str = "grading run"):
        self.path, self.what, self.fix, self.kind = Path(path), what, fix, kind
        self.fd: int | None = None

    def acquire(self, wait_for_orphans: float = 5.0) -> "RunLock":
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise OutputError(f"cannot write {self.what} ({_why_not_writable(self.path.parent, exc)}); "
                              f"{self.fix}") from None
        if not _lock(fd, self.path, wait_for_orphans):
            holder = _read_holder(fd)
            os.close(fd)
            raise locked(holder, self.what)
        os.ftruncate(fd, 0)
        started = written_time(datetime.now(timezone.utc))
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "started": started, "kind": self.kind}).encode(), 0)
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


def folder_lock(out: Path) -> RunLock:
    return RunLock(Path(out) / LOCK_NAME, f"the output folder {out}", "choose a folder you can write with --out")


def _why_not_writable(folder: Path, exc: OSError) -> str:
    """Why a folder could not be made or written, in words: a file in its way, or the system's reason."""
    for part in (folder, *folder.parents):
        if os.path.lexists(part) and not part.is_dir():
            return f"{part} is a file, not a folder"
    return f"{folder}: {exc.strerror or exc}"


def gradebook_lock(db_url: str | None):
    """The lock beside a SQLite gradebook file, the advisory lock of a PostgreSQL gradebook (``pglock``),
    None for another database."""
    if is_postgres(db_url):
        return ServerRunLock(db_url)
    db = sqlite_path(db_url)
    if db is None:
        return None
    return RunLock(db.with_name(f".{db.name}{LOCK_NAME}"), f"the gradebook {db}",
                   "choose a gradebook in a folder you can write with --gradebook")


class RunLocks:
    """Every lock of a run: its output folder's and its gradebook's."""

    def __init__(self, out: Path, db_url: str | None = None):
        self.locks = [lock for lock in (folder_lock(out), gradebook_lock(db_url)) if lock is not None]

    def __enter__(self) -> "RunLocks":
        try:
            for lock in self.locks:
                lock.acquire()
        except BaseException:
            self.release()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def release(self) -> None:
        for lock in self.locks:
            lock.release()

    def held(self) -> list[RunLock]:
        """The lock files held (the writer inherits their descriptors)."""
        return [lock for lock in self.locks if isinstance(lock, RunLock) and lock.fd is not None]

    @property
    def server_backend(self) -> int | None:
        """The server process of the connection holding a PostgreSQL gradebook's advisory lock."""
        return next((lock.backend for lock in self.locks if getattr(lock, "backend", None)), None)

    @property
    def fds(self) -> list[int]:
        return [lock.fd for lock in self.held()]


def _lock(fd: int, path: Path, wait_for_orphans: float) -> bool:
    """Take the lock; if its holder's main process is gone (its last children are being killed by
    the kernel), give them ``wait_for_orphans`` seconds to go."""
    deadline = time.monotonic() + wait_for_orphans
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if alive(_read_holder(fd).get("pid")) or time.monotonic() > deadline:
                return False
            time.sleep(0.1)


def _read_holder(fd: int) -> dict:
    try:
        holder = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except ValueError:
        return {}
    return holder if isinstance(holder, dict) else {}


def belongs_to_run(fd: int, path: Path) -> bool:
    """True while ``path`` is still the lock file that ``fd`` (an inherited, held lock) opened."""
    try:
        held, current = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (held.st_dev, held.st_ino) == (current.st_dev, current.st_ino)
