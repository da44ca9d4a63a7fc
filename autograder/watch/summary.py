"""What happened before the deadline, read from the journal for the report ``grade`` writes: how many
checks each student used (and how many submissions the limit turned away), and which misconceptions
students fixed after feedback named them (a check that named it, and a later one that did not)."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .config import STATE_FOLDER
from .journal import NAME, read_events


@dataclass
class BeforeDeadline:
    checks: dict[str, int] = field(default_factory=lambda: defaultdict(int))       # student -> graded checks
    refused: dict[str, int] = field(default_factory=lambda: defaultdict(int))      # student -> limit pages
    named: dict[str, set] = field(default_factory=lambda: defaultdict(set))        # misconception -> students
    fixed: dict[str, set] = field(default_factory=lambda: defaultdict(set))        # ... who fixed it after


def before_deadline(course: Path, assignment: str) -> BeforeDeadline | None:
    """The summary of ``course``'s journal for ``assignment``; None when watch never ran for it."""
    events = read_events(Path(course) / STATE_FOLDER / NAME)
    student = {e.get("entry"): str(e.get("student")) for e in events
               if e.get("event") == "received" and e.get("assignment") == assignment}
    if not student:
        return None
    out, history = BeforeDeadline(), defaultdict(list)
    for e in events:
        who = student.get(e.get("entry"))
        if who is None:
            continue
        if e.get("event") == "graded":
            out.checks[who] += 1
            history[who].append((float(e.get("at") or 0), set(map(str, e.get("diagnoses") or []))))
        elif e.get("event") == "published" and e.get("kind") == "limit":
            out.refused[who] += 1
    for who, checks in history.items():
        checks.sort(key=lambda c: c[0])
        for i, (_, names) in enumerate(checks):
            for name in names:
                out.named[name].add(who)
                if any(name not in later for _, later in checks[i + 1:]):
                    out.fixed[name].add(who)
    return out
