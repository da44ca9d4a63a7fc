"""What a feedback page says first, and each piece of advice said once per cell.

A check's message is its own observation followed by advice (a diagnosed misconception's
sentence, a localisation). Several failed checks of one cell often end with the same
advice; the page shows each sentence once per cell and the summary names, per notebook,
the failure that costs the most points as the main problem.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# a sentence ends at . ! or ? followed by a space and a capital letter (not inside "0.5" or "e.g. x")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
SAID_ABOVE = "(The same advice as above applies.)"


def sentences(message: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(message.strip()) if s.strip()]


def deduplicated(checks) -> dict[int, str]:
    """index of each failed check -> its message without sentences an earlier check of its cell said."""
    said: dict[str, set[str]] = {}
    out = {}
    for i, c in enumerate(checks):
        if c.passed:
            continue
        seen = said.setdefault(c.grade_id, set())
        parts = sentences(c.message)
        fresh = [s for s in parts if s not in seen]
        seen.update(parts)
        out[i] = " ".join(fresh) + (f" {SAID_ABOVE}" if len(fresh) < len(parts) else "")
    return out


@dataclass(frozen=True)
class NotebookSummary:
    notebook: str
    earned: int
    max: int
    problem: str | None          # the message of the failure that costs the most points
    diagnosis: str | None


def main_problem(checks):
    """The failed check that costs the most points (the first of equals, in rubric order), or None."""
    failed = [c for c in checks if not c.passed]
    return max(failed, key=lambda c: c.max_points - c.points, default=None)


def notebook_summaries(record) -> list[NotebookSummary]:
    out = []
    for notebook, score in record.notebooks.items():
        worst = main_problem([c for c in record.checks if c.notebook == notebook])
        out.append(NotebookSummary(notebook, score.earned, score.max, worst.message if worst else None,
                                   worst.diagnosis if worst else None))
    return out
