"""Per-student feedback pages: a summary first, then every check, its points and what to change.

Never a test's source. The summary gives the score of each notebook and its main problem
(the failure that costs the most points) with its fix; in the table below, each piece of
advice is said once per cell.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..assignment import NOTEBOOKS
from ..gradebook.lateness import Lateness, score
from ..inert import shown_id, terminal
from ..records import Record, Score, atomic_write
from . import svg
from .advice import deduplicated, main_problem, notebook_summaries
from .html import escape, figure, message, page, table


GRADE_IDS = frozenset(g for ids in NOTEBOOKS.values() for g in ids)


def _tag(diagnosis: str | None) -> str:
    return f' <span class="tag">{escape(diagnosis)}</span>' if diagnosis else ""


def start_here(checks, short: list[str] = ()) -> str:
    """The failure that costs the most points, with its fix, as the page's first advice; where every check
    passes, ``short`` says what took the points the score lacks (never a bare "Every check passes" under
    "Score 7 / 8")."""
    worst = main_problem(checks)
    if worst is None and short:
        return (f'<p class="start">Every automatic check passes; the score is below the maximum for '
                f"{escape(' and '.join(short))}.</p>")
    if worst is None:
        return '<p class="start">Every check passes.</p>'
    return f'<p class="start"><strong>Start here:</strong> {message(worst.message)}{_tag(worst.diagnosis)}</p>'


def shortfall(record: Record, notebook: str | None, penalty: float) -> list[str]:
    """What took points from a score whose checks all pass (of one notebook, or all): a late penalty, a
    person's score; [] when nothing did."""
    score = record.notebooks[notebook] if notebook else Score(record.total, record.max_total)
    penalty = round(penalty, 6)
    why = [f"{penalty:g} point{'' if penalty == 1 else 's'} off for lateness"] if penalty else []
    if score.earned < score.max:
        by_person = any(notebook in (None, c.notebook) for g, c in record.cells.items() if g in record.manual)
        why.append("your grader's score, below" if by_person else "points the checks did not give")
    return why


def _summary(record: Record, late: Lateness | None) -> str:
    cats = ", ".join(f"{k} {v.earned}/{v.max}" for k, v in record.categories.items())
    cats += "; by the automatic checks, before your grader's points" if record.manual else ""
    rows = ([escape(s.notebook), f"{s.earned}/{s.max}",
             message(s.problem) + _tag(s.diagnosis) if s.problem else '<span class="pass">all checks pass</span>']
            for s in notebook_summaries(record))
    when = f"<p>Submission time: {escape(late.describe())}.</p>" if late and late.describe() else ""
    return (f'<section id="summary"><p class="total"><strong>Total: {score(record.total, late):g} / '
            f"{record.max_total}</strong> ({escape(cats)})</p>{when}{start_here(record.checks, shortfall(record, None, record.total - score(record.total, late)))}"
            f'{table(["notebook", "points", "main problem and its fix"], rows)}</section>')


def review_block(record: Record, notebook: str | None = None) -> str:
    """What a student's page says of a review (of ``notebook``, or the whole submission): that it awaits
    one, with the reasons that accuse nobody (a damaged file, say). What the grader suspects about
    integrity is never said here: a person tells the student, in a comment of their own. Nothing once a
    person has graded the review. A notebook's page speaks of its own review only: a notebook with no reason
    of its own, nor of the whole submission, awaits none (every page said so when one notebook was flagged)."""
    if not record.open_review or (notebook and not record.review_reasons(notebook)):
        return ""
    items = "".join(f"<li>{escape(p)}</li>" for p in record.told_student(notebook))
    what = "This notebook" if notebook else "This submission"
    return (f'<div class="review"><p>{what} awaits review by an instructor{":" if items else "."}</p>'
            f'{f"<ul>{items}</ul>" if items else ""}</div>')


def by_hand(record: Record, notebook: str | None = None) -> str:
    """The points and comments a person gave in the gradebook (of one notebook, or all); "" when none. A
    score a person confirmed as the checks gave it (formgrader's "Full credit" on full marks) is no grade of
    theirs to show."""
    cells = [(g, c) for g, c in record.cells.items() if g in record.changed_by_hand and notebook in (None, c.notebook)]
    comments = [c for c in record.comments if notebook in (None, c[0])]
    if not cells and not comments:
        return ""
    rows = [f"<li>{escape(g)}: {c.earned:g}/{c.max} given by your grader (the automatic checks gave "
            f"{record.auto_cells[g].earned})</li>" for g, c in cells]
    rows += [f"<li>{escape(nb)}.ipynb, {escape(cell_label(cell))}: {escape(text)}</li>" for nb, cell, text in comments]
    return f'<div class="by-hand"><h2>From your grader</h2><ul>{"".join(rows)}</ul></div>'


def cell_label(cell: str) -> str:
    """A commented cell as a student knows it: by the exercise it belongs to (the name the checks table
    shows), not nbgrader's internal cell id ("ex1_softmax_solution", "cell-5e0c2a1f")."""
    base, _, kind = cell.rpartition("_")
    if kind in ("solution", "visible") and base in GRADE_IDS:
        return f"your code for {base}" if kind == "solution" else f"the visible tests of {base}"
    if cell in GRADE_IDS:
        return f"the tests of {cell}"
    return "a cell of the notebook" if re.fullmatch(r"cell-[0-9a-f]{6,}", cell) else cell


def checks_table(checks) -> str:
    return table(["cell", "check", "result", "points", "what to change"], check_rows(checks))


def check_rows(checks):
    """One row per check; a failed check's advice without what an earlier check of its cell said."""
    checks = list(checks)
    advice = deduplicated(checks)
    for i, c in enumerate(checks):
        status = '<span class="pass">passed</span>' if c.passed else '<span class="fail">failed</span>'
        text = "" if c.passed else message(advice[i]) + _tag(c.diagnosis)
        yield [escape(c.grade_id), escape(c.check.replace("_", " ")), status, f"{c.points:g}/{c.max_points:g}", text]


def plots(checks) -> list[str]:
    """Heatmaps for failed masking and weights checks that kept the student's weights."""
    out, seen = [], set()
    for c in checks:
        d = c.details or {}
        if c.passed or "student_weights" not in d or c.grade_id in seen:
            continue
        seen.add(c.grade_id)
        title = f"{c.grade_id}: {c.check.replace('_', ' ')}"
        student, expected = d["student_weights"], d.get("expected_weights", [])
        out.append(figure(svg.heatmaps(student, expected, title), svg.heatmap_table(student, expected)))
    return out


def feedback_html(record: Record, late: Lateness | None = None) -> str:
    parts = [_summary(record, late), by_hand(record), review_block(record), "<h2>Every check</h2>",
             checks_table(record.checks)]
    parts += plots(record.checks)
    if record.notes:
        parts.append("<h2>Errors in your notebook</h2><ul>" +
                     "".join(f"<li>{message(n)}</li>" for n in record.notes) + "</ul>")
    output = terminal(record.output)
    if output.strip():
        parts.append(f"<h2>Your code's output</h2><pre>{escape(output[:20000])}</pre>")
    return page(f"Feedback for {shown_id(record.student_id)}: scaled dot-product attention", "\n".join(parts))


def write_feedback(path: Path, record: Record, late: Lateness | None = None) -> None:
    atomic_write(path, feedback_html(record, late))
