"""Plain-text views of a result record (the `check` command's table), safe to print to a terminal.

Messages, notes and integrity lines carry a student's text (exception
messages, file names). Each is made inert: escape sequences and control
characters are removed and a student's newline never starts a row of its own,
so nothing can clear the screen or print a fake total.
"""
from __future__ import annotations

from .inert import one_line


def _row(c) -> str:
    mark = "pass" if c.passed else f"FAIL  {one_line(c.message)}"
    if c.diagnosis:
        mark += f"  [{one_line(c.diagnosis)}]"
    return f"{one_line(c.grade_id):<14} {one_line(c.check):<26} {c.points:>2}/{c.max_points:<3}  {mark}"


def check_table(record) -> str:
    """The `check` command's view of a Record: every check, the totals, what needs review."""
    rows = [f"{'grade id':<14} {'check':<26} {'points':>6}  result"]
    rows += [_row(c) for c in record.checks]
    rows.append("")
    rows.append(f"total {record.total}/{record.max_total}" + ("  (needs review)" if record.needs_review else ""))
    for cat, v in record.categories.items():
        rows.append(f"  {one_line(cat):<12} {v.earned}/{v.max}")
    rows += [f"! {one_line(line)}" for line in record.integrity]
    rows += [f"  note: {one_line(line)}" for line in record.notes]
    return "\n".join(rows)


def doctor_table(layers: dict[str, str]) -> str:
    width = max(len(k) for k in layers)
    return "\n".join(f"{name:<{width}}  {one_line(state)}" for name, state in layers.items())
