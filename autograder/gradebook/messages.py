"""The gradebook writer's pipe, both ways, one frozen type per message (each line is its ``to_dict``).

The run sends ``Scores``, one student's, as each record is written (a JSON object a line, or a list of
them at the end); the writer answers with one ``Answer`` per student: how late the work was and each
notebook's penalty, as nbgrader's gradebook says, and what a person graded there in formgrader; or why the
gradebook could not hold that student's rows (``refused``), when only theirs failed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def _floats(value: object) -> dict[str, float]:
    return {str(k): float(v) for k, v in value.items()} if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Scores:
    """One student's scores, as ``nbgrader autograde`` records them."""
    student: str
    earned: dict[str, float]                 # grade_id -> the points the checks gave
    flags: dict[str, tuple[str, ...]] = field(default_factory=dict)   # notebook -> why a person must grade it
    submitted: str = ""                      # the submission time (nbgrader's format); "" when unknown
    fresh: bool = True                       # graded by this run: only then may a cleared cell be flagged again
    changed: bool = False                    # other work than the last record graded: a person's score is flagged

    def to_dict(self) -> dict[str, Any]:
        out = {"student": self.student, "submitted": self.submitted, "fresh": self.fresh,
               "earned": dict(self.earned), "flags": {nb: list(why) for nb, why in self.flags.items()}}
        return {**out, "changed": True} if self.changed else out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Scores:
        flags = data.get("flags") or {}
        return cls(str(data["student"]), _floats(data.get("earned")),
                   {str(nb): tuple(map(str, why)) for nb, why in flags.items() if why},
                   str(data.get("submitted") or ""), bool(data.get("fresh", True)), bool(data.get("changed", False)))


@dataclass(frozen=True)
class Answer:
    """The gradebook's answer for one student."""
    seconds_late: float = 0.0
    due: str = ""                            # the due date with any extension ("" if none)
    penalties: dict[str, float] = field(default_factory=dict)        # notebook -> points taken off
    submitted: str = ""                      # the submission time the gradebook holds
    manual: dict[str, float] | None = None   # grade_id -> a person's score; None: the answer said nothing of it
    comments: tuple[tuple[str, str, str], ...] = ()                  # (notebook, cell, text) a person wrote
    needs_manual_grade: bool = True          # a cell is still to be graded by hand
    refused: str = ""                        # why this student's rows are not in the gradebook ("" when they are)
    differed: dict[str, float] = field(default_factory=dict)        # grade_id -> the automatic score the
    # gradebook held before the run wrote the record's (a record this run did not grade): they disagreed

    def to_dict(self) -> dict[str, Any]:
        out = {"seconds_late": self.seconds_late, "due": self.due, "penalties": dict(self.penalties),
               "submitted": self.submitted, "differed": dict(self.differed)}
        if self.refused:
            out["refused"] = self.refused
        if self.manual is not None:
            out.update(manual=dict(self.manual), comments=[list(c) for c in self.comments],
                       needs_manual_grade=self.needs_manual_grade)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Answer:
        manual = _floats(data["manual"]) if "manual" in data else None
        comments = tuple((str(c[0]), str(c[1]), str(c[2])) for c in data.get("comments") or () if len(c) == 3)
        return cls(float(data.get("seconds_late") or 0.0), str(data.get("due") or ""),
                   _floats(data.get("penalties")), str(data.get("submitted") or ""), manual, comments,
                   bool(data.get("needs_manual_grade", True)), str(data.get("refused") or ""),
                   _floats(data.get("differed")))
