"""What happened before the deadline, read from the journal for the report ``grade`` writes: how many
checks each student used (and how many submissions the limit turned away), and which misconceptions
students were told of (a check whose published pages named it: not with ``show = "visible"``) and which
of them they fixed after feedback (a submission that arrived after those pages were published and no
longer showed it: submissions that came while watch was not running are graded when it starts, and one
a student made before seeing any feedback is no fix)."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .events import Graded, Published, Received
from .log import NAME, STATE_FOLDER, read_events


@dataclass
class BeforeDeadline:
    checks: dict[str, int] = field(default_factory=lambda: defaultdict(int))       # student -> graded checks
    refused: dict[str, int] = field(default_factory=lambda: defaultdict(int))      # student -> limit pages
    named: dict[str, set] = field(default_factory=lambda: defaultdict(set))        # misconception -> students
    fixed: dict[str, set] = field(default_factory=lambda: defaultdict(set))        # ... who fixed it after


def before_deadline(course: Path, assignment: str) -> BeforeDeadline | None:
    """The summary of ``course``'s journal for ``assignment``; None when watch never ran for it."""
    events = read_events(Path(course) / STATE_FOLDER / NAME)
    student = {e.entry: e.student for e in events if isinstance(e, Received) and e.assignment == assignment}
    if not student:
        return None
    out, history = BeforeDeadline(), defaultdict(list)
    arrived = {e.entry: float(e.received) for e in events if isinstance(e, Received)}
    shown = {e.entry: float(e.at) for e in events                    # pages that named the misconceptions
             if isinstance(e, Published) and e.kind == "feedback" and e.pages > 0 and e.show != "visible"}
    for e in events:
        who = student.get(e.entry)
        if who is None:
            continue
        if isinstance(e, Graded):
            out.checks[who] += 1
            history[who].append((arrived.get(e.entry, 0.0), shown.get(e.entry), set(e.diagnoses)))
        elif isinstance(e, Published) and e.kind == "limit":
            out.refused[who] += 1
    for who, checks in history.items():
        checks.sort(key=lambda c: c[0])
        for i, (_, seen_at, names) in enumerate(checks):
            if seen_at is None:
                continue                    # the student was not told: no page, or only the visible tests
            for name in names:
                out.named[name].add(who)
                # fixed after feedback: a submission that arrived after this one's pages were published
                if any(name not in later for came, _, later in checks[i + 1:] if came > seen_at):
                    out.fixed[name].add(who)
    return out

