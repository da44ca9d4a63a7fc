"""How many graded checks a student may use per period (``c.FeedbackOnSubmit.limit = "5/day"``).

The window slides: a check used at 09:00 under "5/day" frees its place at 09:00 the next day.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

PERIODS = {"hour": 3600, "day": 86400}
_LIMIT = re.compile(r"\s*(\d{1,6})\s*/\s*(hour|day)\s*")


@dataclass(frozen=True)
class Limit:
    count: int
    period: str                     # "hour" or "day"

    @property
    def seconds(self) -> int:
        return PERIODS[self.period]

    def __str__(self) -> str:
        return f"{self.count} per {self.period}"


def parse_limit(text) -> Limit:
    """``"5/day"`` or ``"2/hour"``; ValueError saying what is accepted otherwise."""
    match = _LIMIT.fullmatch(text) if isinstance(text, str) else None
    if not match or int(match.group(1)) < 1:
        raise ValueError(f"c.FeedbackOnSubmit.limit is {text!r}: write checks per period, such as \"5/day\" "
                         "or \"2/hour\" (at least 1)")
    return Limit(int(match.group(1)), match.group(2))


def next_check(used: list[float], limit: Limit, now: float) -> float | None:
    """None when a check is allowed at ``now`` (``used``: when earlier checks were made, epoch seconds),
    else the time at which the next one is."""
    recent = sorted(t for t in used if t > now - limit.seconds)
    if len(recent) < limit.count:
        return None
    return recent[len(recent) - limit.count] + limit.seconds
