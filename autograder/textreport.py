"""Plain-text views of result records (`check`'s table, the class summary), safe to print to a terminal.

Messages, notes and integrity lines carry a student's text (exception
messages, file names). Each is made inert: escape sequences and control
characters are removed and a student's newline never starts a row of its own,
so nothing can clear the screen or print a fake total.
"""
from __future__ import annotations

import unicodedata

from .inert import one_line, told_apart
from .gradebook.lateness import score


def _row(c) -> str:
    mark = "pass" if c.passed else f"FAIL  {one_line(c.message)}"
    if c.diagnosis:
        mark += f"  [{one_line(c.diagnosis)}]"
    return f"{one_line(c.grade_id):<14} {one_line(c.check):<26} {c.points:>2g}/{c.max_points:<3g}  {mark}"


def check_table(record, by_person: dict[str, float] | None = None) -> str:
    """The `check` command's view of a Record: every check, the totals, what needs review, and where the
    gradebook holds a person's score (``by_person``: grade_id -> score) that differs from the checks', that
    score and the total the gradebook counts."""
    rows = [f"{'grade id':<14} {'check':<26} {'points':>6}  result"]
    rows += [_row(c) for c in record.checks]
    rows.append("")
    rows.append(f"total {record.total}/{record.max_total}" + ("  (needs review)" if record.needs_review else ""))
    for cat, v in record.categories.items():
        rows.append(f"  {one_line(cat):<12} {v.earned}/{v.max}")
    rows += [f"! {one_line(line)}" for line in record.for_instructor]
    rows += [f"  note: {one_line(line)}" for line in record.notes]
    rows += _by_person(record, by_person or {})
    return "\n".join(rows)


def _by_person(record, by_person: dict[str, float]) -> list[str]:
    from dataclasses import replace
    differ = {g: v for g, v in by_person.items() if g in record.auto_cells and v != record.auto_cells[g].earned}
    if not differ:
        return []
    cells = ", ".join(f"{g} {v:g} (the checks give {record.auto_cells[g].earned:g} of {record.auto_cells[g].max:g})"
                      for g, v in sorted(differ.items()))
    total = replace(record, manual={**record.manual, **by_person}).total
    return [f"gradebook: a person scored {one_line(cells)}; grade, formgrader and nbgrader export count the "
            f"person's score: total {total:g}/{record.max_total:g} before any late penalty"]


ID_WIDTH = 40          # longer student ids are cut in the table (the CSV and records keep them whole)


def columns(text: str) -> int:
    """The columns ``text`` takes in a terminal: a wide or full-width character two, a combining mark none."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
               for ch in text)


def _fit(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` columns (with "..."), then padded with spaces to exactly ``width``."""
    if columns(text) > width:
        while columns(text) > width - 3:
            text = text[:-1]
        text += "..."
    return text + " " * (width - columns(text))


def summary_table(records, late: dict | None = None) -> str:
    """One line per student (total, late, review, diagnoses), then the class in one sentence: the table
    `make demo` and `grade` end with. Totals are what the gradebook shows: a person's scores included,
    late penalties taken off (``late``: student -> Lateness)."""
    late = late or {}
    names = told_apart((r.student_id for r in records), letters=True)
    width = min(ID_WIDTH, max([len("student"), *(columns(n) for n in names.values())]))
    names = {s: _fit(n, width) for s, n in names.items()}
    totals = {r.student_id: score(r.total, late.get(r.student_id)) for r in records}
    lines = [f"{'student':<{width}} {'total':>7}  {'late':<7} {'review':<6}  diagnoses"]
    for r in sorted(records, key=lambda r: r.student_id):
        lines.append(f"{names[r.student_id]} {totals[r.student_id]:>3g}/{r.max_total:<3}  "
                     f"{_late_mark(late.get(r.student_id)):<7} {'yes' if r.open_review else '':<6}  "
                     f"{one_line(', '.join(r.diagnoses))}".rstrip())
    full = sum(totals[r.student_id] >= r.max_total for r in records)           # extra credit is full marks too
    review = sum(r.open_review for r in records)
    done = sum(r.needs_review and r.reviewed for r in records)
    late_count = sum(bool(_late_mark(late.get(r.student_id))) for r in records)
    lines += ["", f"{len(records)} submission{'s' if len(records) != 1 else ''} graded: {full} full marks, "
              f"{review} need{'s' if review == 1 else ''} review" + (f" ({done} more reviewed by hand)" if done else "")
              + (f", {late_count} late or of unknown lateness." if late_count else ".")
              + (" Totals are after late penalties." if late_count else "")]
    return "\n".join(lines)


def _late_mark(lateness) -> str:
    """"late" with the points it cost ("late -8"), "?" when how late is unknown, "" when on time."""
    if lateness is None:
        return ""
    if lateness.unknown:
        return "?"
    if lateness.seconds_late > 0:
        return f"late -{lateness.penalty:g}" if lateness.penalty else "late"
    return ""


def outputs_lines(out) -> str:
    """Where a batch's outputs are."""
    return "\n".join([f"grades:   {out / 'grades.csv'}", f"feedback: {out / 'feedback'}/<student>/index.html",
                      f"report:   {out / 'report.html'}"])


def doctor_table(layers: dict[str, str]) -> str:
    width = max(len(k) for k in layers)
    return "\n".join(f"{name:<{width}}  {one_line(state)}" for name, state in layers.items())
