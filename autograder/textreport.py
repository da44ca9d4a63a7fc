"""Plain-text views of result records (`check`'s table, the class summary), safe to print to a terminal.

Messages, notes and integrity lines carry a student's text (exception
messages, file names). Each is made inert: escape sequences and control
characters are removed and a student's newline never starts a row of its own,
so nothing can clear the screen or print a fake total.
"""
from __future__ import annotations

from .inert import one_line, told_apart


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
    rows += [f"! {one_line(line)}" for line in (*record.integrity, *record.review)]
    rows += [f"  note: {one_line(line)}" for line in record.notes]
    return "\n".join(rows)


ID_WIDTH = 40          # longer student ids are cut in the table (the CSV and records keep them whole)


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def summary_table(records) -> str:
    """One line per student (total, review, diagnoses), then the class in one sentence: the table
    `make demo` and `grade` end with."""
    names = {s: _fit(shown, ID_WIDTH) for s, shown in told_apart(r.student_id for r in records).items()}
    width = max([len("student"), *map(len, names.values())])
    lines = [f"{'student':<{width}} {'total':>7}  {'review':<6}  diagnoses"]
    for r in sorted(records, key=lambda r: r.student_id):
        lines.append(f"{names[r.student_id]:<{width}} {r.total:>3}/{r.max_total:<3}  "
                     f"{'yes' if r.needs_review else '':<6}  {one_line(', '.join(r.diagnoses))}")
    full = sum(r.total == r.max_total for r in records)
    review = sum(r.needs_review for r in records)
    lines += ["", f"{len(records)} submissions graded: {full} full marks, {review} need review."]
    return "\n".join(lines)


def outputs_lines(out) -> str:
    """Where a batch's outputs are."""
    return "\n".join([f"grades:   {out / 'grades.csv'}", f"feedback: {out / 'feedback'}/<student>/index.html",
                      f"report:   {out / 'report.html'}"])


def doctor_table(layers: dict[str, str]) -> str:
    width = max(len(k) for k in layers)
    return "\n".join(f"{name:<{width}}  {one_line(state)}" for name, state in layers.items())
