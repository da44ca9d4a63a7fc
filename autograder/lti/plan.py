"""What the sync does for each matched student, decided from three truths: the gradebook's total (what the
LMS should hold), the journal (what was posted last) and the LMS's results (what it holds now).

- ``post``: the gradebook's score differs from the last one posted (or none was), and the LMS still holds
  what was posted last: posted, with a new timestamp, so it replaces the LMS's result.
- ``unchanged``: the last score posted is the gradebook's and the LMS still holds it: nothing is sent.
- ``recorded``: nothing was posted yet, and the LMS already holds the gradebook's final score: noted in
  the journal, not sent again.
- ``changed``: the LMS holds something other than the last score posted (a person changed it in the LMS),
  or a score this tool never posted that differs from the gradebook's: named (old -> new), left as it is
  unless ``force``.

A total is final (``FullyGraded``) unless a cell still awaits a person in the gradebook: then the LMS is
told ``PendingManual`` with no score (AGS: a score without ``scoreGiven`` clears the LMS's result), so no
provisional number is shown as a grade. A student with no submission gets nbgrader export's 0, with
``activityProgress`` Initialized.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..gradebook.totals import Total
from .journal import FULLY_GRADED, PENDING_MANUAL, Journal, Posted, same_fraction
from .roster import Member

POST, UNCHANGED, RECORDED, CHANGED = "post", "unchanged", "recorded", "changed"


@dataclass(frozen=True)
class Decision:
    kind: str
    total: Total
    member: Member
    desired: Posted
    last: Posted | None
    in_lms: float | None             # the LMS's result as a fraction of its maximum (None: no score)

    @property
    def user_id(self) -> str:
        return self.member.user_id

    def change(self) -> tuple[str, str]:
        """(old, new) in the assignment's points: the last score posted and what the LMS holds now."""
        old = _points(self.last.score) if self.last and self.last.score is not None else "no score"
        new = _points(self.in_lms * self.desired.maximum) if self.in_lms is not None else "no score"
        return old, new


def _points(value: float) -> str:
    return f"{round(float(value), 4):g}"


def desired_score(total: Total, timestamp: str) -> Posted:
    if total.needs_manual_grade:
        return Posted(total.student, None, total.max_score, PENDING_MANUAL, "Submitted", timestamp)
    activity = "Completed" if total.submitted else "Initialized"
    return Posted(total.student, float(total.score), total.max_score, FULLY_GRADED, activity, timestamp)


def lms_scores(results: list[dict], item_maximum: float) -> dict[str, float | None]:
    """LMS user id -> the result's score as a fraction of its maximum (None: a result with no score)."""
    out = {}
    for row in results:
        user, score, maximum = row.get("userId"), row.get("resultScore"), row.get("resultMaximum")
        if isinstance(user, bool) or not isinstance(user, (str, int)):
            continue
        if not _number(maximum) or maximum <= 0:
            maximum = item_maximum
        out[str(user)] = float(score) / maximum if _number(score) and maximum else None
    return out


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def settle(journal: Journal, in_lms: dict[str, float | None]) -> tuple[Journal, int]:
    """The journal with each pending score the LMS already holds counted as posted (a sync killed between
    sending it and noting it), the rest dropped (not received: decided afresh); how many were settled."""
    landed = {user: p for user, p in journal.pending.items()
              if p.fraction is not None and same_fraction(in_lms.get(user), p.fraction)}
    return journal.with_changes(posted={**journal.posted, **landed}, pending={}), len(landed)


def decide(pairs, journal: Journal, in_lms: dict[str, float | None], *, timestamp: str,
           force: bool = False) -> list[Decision]:
    return [_decide(total, member, journal.posted.get(member.user_id), in_lms.get(member.user_id),
                    desired_score(total, timestamp), force) for total, member in pairs]


def _decide(total: Total, member: Member, last: Posted | None, now: float | None, desired: Posted,
            force: bool) -> Decision:
    if last is not None:
        changed = not same_fraction(now, last.fraction)
        kind = UNCHANGED if not changed and last.same(desired) else POST
    else:
        changed = now is not None and not same_fraction(now, desired.fraction)
        kind = RECORDED if now is not None and not changed and desired.grading == FULLY_GRADED else POST
    if changed:
        kind = POST if force else CHANGED
    return Decision(kind, total, member, desired, last, now)
