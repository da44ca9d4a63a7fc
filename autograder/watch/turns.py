"""Whose turn it is: the service's work for one account, reading included, taken in fair turns.

Reading a submission (its digest, ``inbound.receive``) costs what its graded files hold: four hard links to one
63 MiB file are 252 MiB read. Once, every ready folder was read before one per owner was chosen, so a classmate
waited for all of another account's folders (66-75 s behind 80 of them). Now a pass costs, per owner, a look at
each folder's own entry (``os.lstat``: its owner and change time, nothing read), a look inside at most
``MAX_LOOKS`` of its folders, and the reading and grading of at most one submission; owners take their turns in
the order of what the service has read for them lately (``Ledger``, bytes as read, every hard link counted), the
least first, then the earliest arrival. A classmate's wait is at most one turn of each other account, whatever
that account's number of folders or bytes: a turn reads at most one submission's budget (``intake.files.READ_BYTES``).
"""
from __future__ import annotations

import os
from collections import defaultdict, deque
from dataclasses import dataclass

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
