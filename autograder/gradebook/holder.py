"""Who holds a run lock, and the one line a second run is told (the lock file's and the server's alike)."""
from __future__ import annotations

import os


class RunLocked(ValueError):
    """Another grading run holds the output folder or the gradebook."""


def locked(holder: dict, what: str) -> RunLocked:
    """The line a second run is told; the holder says what kind of run it is (a ``watch`` is named so)."""
    kind = holder.get("kind") if holder.get("kind") in KINDS else "grading run"
    return RunLocked(f"another {kind} (pid {holder.get('pid', '?')}, started at {holder.get('started', '?')}) "
                     f"is writing to {what}; wait for it or stop it")


KINDS = ("grading run", "watch serving feedback on submit")


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
