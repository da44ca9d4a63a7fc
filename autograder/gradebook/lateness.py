"""How late a submission was and what it cost, as nbgrader's gradebook says (see ``latepenalties``).

A ``Lateness`` is decided when the outputs are written, not when a submission is graded, so a due date
or an extension set later takes effect on the next ``grade --resume`` without regrading. The score of
every output is ``score(record, lateness)``: the record's total less the penalties, never below 0, which
is the ``score`` column of ``nbgrader export``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .messages import Answer
from .timestamps import Submitted, read_timestamp


@dataclass(frozen=True)
class Lateness:
    submitted: str = ""                 # the submission time, UTC ("" when timestamp.txt gave none)
    due: str = ""                       # the due date with any extension, as written_time writes it ("" if none)
    seconds_late: float = 0.0
    penalties: dict = field(default_factory=dict)      # notebook -> points taken off
    note: str = ""                      # why the submission time is unknown (a damaged timestamp.txt)
    unknown: str = ""                   # why how late it was is unknown (the gradebook could not be updated)

    @property
    def penalty(self) -> float:
        return float(sum(self.penalties.values()))

    def describe(self) -> str:
        """One line for people: "" when on time or when no due date is set."""
        if self.unknown:
            return self.unknown
        if self.note:
            return self.note
        if self.seconds_late <= 0:
            return ""
        cost = f"; late penalty {self.penalty:g} points" if self.penalty else "; no late penalty"
        return (f"submitted {to_the_second(self.submitted)}, {late_text(self.seconds_late)} after the due date "
                f"{to_the_second(self.due)}{cost}")

    @classmethod
    def from_gradebook(cls, answer: Answer | None, submitted: Submitted) -> Lateness:
        """From the gradebook writer's answer for one student (``messages.Answer``; see latepenalties)."""
        answer = answer or Answer()
        return cls(answer.submitted or submitted.text(), answer.due, answer.seconds_late, dict(answer.penalties),
                   submitted.note or "")


def to_the_second(text: str) -> str:
    """A time as nbgrader writes it (``2026-12-01 17:00:00.000000 UTC``) without a fraction of zeros."""
    return text.replace(".000000", "")


def late_text(seconds: float) -> str:
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    parts = [f"{days} d"] * bool(days) + [f"{hours} h"] * bool(hours) + [f"{minutes} min"] * bool(minutes)
    return " ".join(parts) or f"{seconds:.0f} s"


def score(total: float, lateness: Lateness | None) -> float:
    """The score after the late penalty (nbgrader export's ``score``: raw score less penalty, at least 0)."""
    return max(0.0, float(total) - (lateness.penalty if lateness else 0.0))


def submission_times(course: Path, assignment: str, students) -> dict[str, Submitted]:
    """Each student's ``submitted/<student>/<assignment>/timestamp.txt``, read as hostile input."""
    return {s: read_timestamp(Path(course) / "submitted" / s / assignment) for s in students}
