"""What the service did with each inbound entry: one JSON line per event, appended and synced.

Events, in the order they happen to one entry (its folder name in inbound)::

    received   the entry was read: student, digest of its secret, when it arrived
    started    grading began (a second ``started`` without ``graded`` means it stopped the service twice)
    stopped    a stop signal ended grading (the submission's fault no more than the instructor's)
    graded     the record is saved in the state folder: score, diagnoses
    published  its pages are in the exchange's feedback folder: kind (feedback, limit, closed)
    note       it was not graded, and why (for the instructor)

An entry is done once published or noted, so after ``kill -9`` or a restart the service continues
where the journal stops: a graded entry is published from its saved record, never graded again.
Each line is one ``write`` to a file opened with ``O_APPEND``, then ``fsync``; a line cut short by
a crash is ignored when read (and the next line starts on its own).
"""
from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .events import Event, Graded, Note, Published, Received, Started, Stopped, parse_event

STATE_FOLDER = "watch"          # in the course folder: the journal, watch's records and its lock
NAME = "journal.jsonl"
MAX_LINE = 64 << 10


@dataclass
class EntryState:
    received: Received | None = None
    starts: int = 0
    graded: Graded | None = None
    published: Published | None = None
    note: str | None = None

    @property
    def done(self) -> bool:
        return self.published is not None or self.note is not None


@dataclass
class JournalState:
    entries: dict[str, EntryState] = field(default_factory=lambda: defaultdict(EntryState))
    secrets: dict[str, str] = field(default_factory=dict)              # secret digest -> first entry
    checks: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))   # student -> charged, at

    def apply(self, event: Event) -> None:
        state = self.entries[event.entry]
        if isinstance(event, Received):
            state.received = event
            if event.secret:
                self.secrets.setdefault(event.secret, event.entry)
        elif isinstance(event, Started):
            state.starts += 1
        elif isinstance(event, Stopped):
            state.starts = max(0, state.starts - 1)
        elif isinstance(event, Graded):
            state.graded = event
            if state.received and event.charged is not False:
                self.checks[state.received.student].append(float(event.at))
        elif isinstance(event, Published):
            state.published = event
        elif isinstance(event, Note):
            state.note = event.note


def read_events(path: Path) -> list[Event]:
    """Every whole event in the journal, in order; a damaged or cut line is skipped."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return []
    events = []
    for line in data.split(b"\n"):
        try:
            event = parse_event(json.loads(line))
        except ValueError:
            continue
        if event is not None:
            events.append(event)
    return events


class Journal:
    """The journal of one state folder, open for appending (the service holds the folder's lock)."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.state = JournalState()
        for event in read_events(self.path):
            self.state.apply(event)
        self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        if os.fstat(self.fd).st_size and not self.path.read_bytes().endswith(b"\n"):
            os.write(self.fd, b"\n")                   # a line cut by a crash: the next one starts anew

    def append(self, event: Event) -> None:
        line = json.dumps(event.to_dict(), ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode() + b"\n"
        if len(line) > MAX_LINE:
            raise ValueError(f"journal event of {len(line)} bytes")
        os.write(self.fd, line)
        os.fsync(self.fd)
        self.state.apply(event)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
