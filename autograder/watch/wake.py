"""Waking the service when inbound changes: inotify through ``watchfiles``, or polling.

Only the inbound folder itself is watched (not its submissions' contents: a student could make
thousands of folders and use up the machine's inotify watches); inotify reports a submission folder
appearing and nbgrader's last step on it (its mode opened to 0777), and the service looks again
at a folder still being written every ``PENDING_SECONDS``. Polling is for an exchange on NFS or
another file system whose changes inotify does not see, and the fallback when inotify fails.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path


class Polling:
    name = "polling"

    def __init__(self, interval: float):
        self.interval, self.failed = interval, None

    def wait(self, timeout: float) -> None:
        time.sleep(max(0.0, min(timeout, self.interval)))

    def close(self) -> None:
        pass


class Inotify:
    """A thread that sets ``changed`` whenever inotify reports a change in ``folder``."""
    name = "inotify"

    def __init__(self, folder: Path):
        import watchfiles                       # noqa: F401  (ImportError: the caller falls back to polling)
        self.folder, self.failed = folder, None
        self.changed, self.stop = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._run, name="watch-inotify", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        import watchfiles
        try:
            for _ in watchfiles.watch(self.folder, stop_event=self.stop, recursive=False, debounce=100, step=10,
                                      rust_timeout=500, yield_on_timeout=False, raise_interrupt=False):
                self.changed.set()
        except Exception as exc:  # noqa: BLE001 - any failure of the watcher means: poll instead
            self.failed = exc
        finally:
            self.changed.set()

    def wait(self, timeout: float) -> None:
        self.changed.wait(max(0.0, timeout))
        self.changed.clear()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=2)


def waker(folder: Path, poll: float | None):
    """Polling every ``poll`` seconds if given, else inotify (polling every second if it cannot start)."""
    if poll:
        return Polling(poll)
    try:
        return Inotify(folder)
    except ImportError:
        return Polling(1.0)
