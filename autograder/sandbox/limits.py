"""Resource limits for one submission's worker (documented defaults; the grader may override)."""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Limits:
    cell_seconds: float = 10.0          # wall clock per notebook cell
    call_seconds: float = 10.0          # wall clock per call of a student function
    total_seconds: float = 90.0         # wall clock for the whole submission
    cpu_seconds: int = 60               # RLIMIT_CPU per worker process
    address_space_extra: int = 3 << 30  # RLIMIT_AS: the fork server's size plus this
    memory_bytes: int = 2 << 30         # cgroup memory limit
    file_bytes: int = 64 << 20          # RLIMIT_FSIZE
    disk_bytes: int = 256 << 20         # the worker's own tmpfs: working folder, /tmp and /dev/shm
    open_files: int = 256               # RLIMIT_NOFILE
    processes: int = 32                 # RLIMIT_NPROC (per sandbox uid) and cgroup pids.max
    output_bytes: int = 64 << 10        # captured stdout + stderr kept for feedback
    result_bytes: int = 64 << 20        # largest array a call may return
    received_bytes: int = 256 << 20     # results the grader accepts from one submission in all (each
                                        # notebook an equal share: the same checks lose, whatever runs first)
    spawns: int = 4                     # worker restarts allowed after a crash or timeout
    overrun_seconds: float = 60.0       # a grading still running this long past its time budget is ended by
                                        # a watchdog and charged (``grading_bound``): its workers first, then
                                        # its grading process where it has one of its own

    def to_dict(self) -> dict:
        return asdict(self)

    def grading_bound(self, visible: bool = False) -> float:
        """Seconds in which grading one submission under these limits ends, or the run's watchdog ends it:
        its workers' time (twice with the visible tests, which run in workers of their own) and the
        overrun allowed twice (once for the submission's own watchdog, which ends its workers and keeps
        what was graded, once more for the grading process's)."""
        return self.total_seconds * (2 if visible else 1) + 2 * self.overrun_seconds


HELD_ITEMSIZE = 8       # the grader reads every answer as float64 (``grading.student.to_array``)


def held_bytes(elements: int) -> int:
    """What an array of ``elements`` numbers costs the grader once it is read: 8 bytes a number, whatever
    dtype it arrived in (an int8 or bool result arrives in one byte a number and is held in eight)."""
    return elements * HELD_ITEMSIZE


class Received:
    """The bytes of results the grader still accepts from one notebook's workers (all of them: a restarted
    worker does not start afresh), counted on what the grader holds once it reads them (``held_bytes``), not
    on what arrived (issue 35, item 7: int8 results within a budget of wire bytes took 8 times that once
    read as float64, and killed ``nbgrader autograde``). Charged in the grading process from the checked
    array descriptors of each reply, never from what the worker says it sent; a frame longer than what is
    left is not read at all, and results held past what is left are not decoded."""

    def __init__(self, total: int):
        self.total, self.left = total, total

    def charge(self, nbytes: int) -> None:
        self.left = max(self.left - nbytes, 0)
