"""Who holds a run lock, and the one line a second run is told (the lock file's and the server's alike)."""
from __future__ import annotations

import os


class RunLocked(ValueError):
    """Another grading run holds the output folder or the gradebook."""


def locked(holder: dict, what: str) -> RunLocked:
    return RunLocked(f"another grading run (pid {holder.get('pid', '?')}, started at {holder.get('started', '?')}) "
                     f"is writing to {what}; wait for it or stop it")


def alive(pid) -> bool:
    """Whether the process ``pid`` (a lock's holder, on this machine) still runs."""
    if not isinstance(pid, int) or pid <= 0:
        return True                              # unknown holder: assume it is a live run
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
