"""Whose turn it is: the service's work for one account, reading included, taken in fair turns.

Reading a submission (its digest, ``inbound.receive``) costs what its graded files hold: four hard links to one
63 MiB file are 252 MiB read. Once, every ready folder was read before one per owner was chosen, so a classmate
waited for all of another account's folders (66-75 s behind 80 of them). Now a pass costs, per owner, a look at
each folder's own entry (``os.lstat``: its owner and change time, nothing read), a look inside at most
``MAX_LOOKS`` of its folders, and the grading of at most one submission; owners take their turns in the order of
what the service has read for them lately (``Ledger``, bytes as read, every hard link counted), the least first,
then the earliest arrival. The reading itself is done off the loop (``Reader``), one submission at a time per
owner, so no turn waits for another account's bytes: a classmate's wait is at most one grading turn of each other
account, whatever that account's number of folders or bytes.
"""
from __future__ import annotations

import os
import threading
from collections import defaultdict, deque
from dataclasses import dataclass

from ..intake.files import Budget
from .inbound import Name, owner_of

MAX_LOOKS = 8              # folders of one owner looked into per pass (the first that is ready is taken)
WINDOW = 600.0             # seconds over which what was read for an owner counts against its place in a pass


@dataclass(frozen=True)
class Candidate:
    """An inbound entry not yet done, known by its own entry only (nothing in it read)."""
    name: str
    parts: Name
    owner: str                      # whose turn it is (``inbound.owner_of``)
    changed: float                  # the entry's change time: its place in its owner's queue


@dataclass(frozen=True)
class Choice:
    """What an owner's turn takes this pass: an entry and what ``inbound.examine`` found (entry None: only
    notes were made, which are done; the next pass looks further)."""
    entry: Candidate | None
    found: object = None


def queues(inbound_fd: int, entries: list[tuple[str, Name]]) -> dict[str, list[Candidate]]:
    """owner -> its entries, earliest first; an entry gone since the listing is left out (the next pass sees)."""
    out: dict[str, list[Candidate]] = defaultdict(list)
    for name, parts in entries:
        try:
            st = os.stat(name, dir_fd=inbound_fd, follow_symlinks=False)
        except OSError:
            continue
        owner = owner_of(st.st_uid, parts.student)          # a link or a file too: its note is its owner's turn
        out[owner].append(Candidate(name, parts, owner, st.st_ctime))
    for queue in out.values():
        queue.sort(key=lambda c: (c.changed, c.name))
    return dict(out)


class Ledger:
    """The bytes read for each owner over the last ``WINDOW`` seconds (the service's clock)."""

    def __init__(self, window: float = WINDOW):
        self.window = window
        self.read: dict[str, deque] = defaultdict(deque)           # owner -> (time, bytes) in order

    def charge(self, owner: str, n: int, now: float) -> None:
        self.read[owner].append((now, int(n)))

    def recent(self, owner: str, now: float) -> int:
        spent = self.read.get(owner)
        while spent and spent[0][0] < now - self.window:
            spent.popleft()
        return sum(n for _, n in spent) if spent else 0


def order(waiting: dict[str, list[Candidate]], ledger: Ledger, now: float) -> list[str]:
    """The owners in the order of their turns this pass: least read lately first, then earliest arrival."""
    return sorted(waiting, key=lambda owner: (ledger.recent(owner, now), waiting[owner][0].changed, owner))


MAX_READING = 4            # submissions read at once, off the service's loop (each of another owner)
READ_WAIT = 0.25           # seconds a pass waits for the readings it started before it takes its turns


class Reader:
    """Reads submissions (``inbound.receive``) off the service's loop, in threads: at most one at a time per
    owner and ``MAX_READING`` in all, so a classmate's small submission is read while another account's
    252 MiB are, and its turn never waits for them. ``done`` gives a finished reading, and the bytes it read."""

    def __init__(self, read):
        self.read = read                                     # (entry, Ready, Budget) -> Ready
        self.lock = threading.Condition()
        self.reading: dict[str, str] = {}                    # owner -> the entry being read for it
        self.finished: dict[str, tuple] = {}                 # entry -> (Ready, bytes read)
        self.started: list[str] = []                         # entries whose reading began since ``started_now``

    def busy(self, owner: str) -> bool:
        with self.lock:
            return owner in self.reading

    def start(self, owner: str, name: str, found) -> bool:
        """Begin reading ``name`` for ``owner``; False when the owner's reading, or ``MAX_READING``, is in flight."""
        with self.lock:
            if owner in self.reading or len(self.reading) >= MAX_READING:
                return False
            self.reading[owner] = name
            self.started.append(name)
        threading.Thread(target=self._run, args=(owner, name, found), daemon=True,
                         name=f"watch-read-{len(self.reading)}").start()
        return True

    def _run(self, owner: str, name: str, found) -> None:
        budget = Budget()
        try:
            got = (self.read(name, found, budget), budget.limit - budget.bytes_left)
        finally:                 # (``inbound.receive`` never raises; were it to, the entry is read again)
            with self.lock:
                if "got" in locals():
                    self.finished[name] = got
                del self.reading[owner]
                self.lock.notify_all()

    def started_now(self) -> list[str]:
        """The entries whose reading began since the last call (this pass's): a pass waits for those only."""
        with self.lock:
            started, self.started = self.started, []
            return started

    def wait(self, names: list[str], seconds: float) -> None:
        """Until none of ``names`` is being read, or ``seconds``: a small submission is read in that time, and
        a pass never waits longer for another account's bytes."""
        with self.lock:
            self.lock.wait_for(lambda: not set(names) & set(self.reading.values()), timeout=seconds)

    def done(self, name: str) -> tuple | None:
        """(Ready, bytes read) once ``name`` is read; None before."""
        with self.lock:
            return self.finished.pop(name, None)

    @property
    def active(self) -> bool:
        with self.lock:
            return bool(self.reading)
