"""The instructor's report: score histogram, failure rates, misconceptions, students to review."""
from __future__ import annotations

from collections import Counter
from html import escape
from pathlib import Path
from statistics import mean, median
from urllib.parse import quote

from ..lateness import Lateness, score
from ..records import Record, atomic_write
from . import svg
from .html import image, page, table


def report_html(records: list[Record], assignment: str, late: dict[str, Lateness] | None = None,
                delivery: list[str] = ()) -> str:
    if not records:
        return page(f"Grading report: {assignment}", "<p>No submissions were graded.</p>")
    late = late or {}
    totals = [score(r.total, late.get(r.student_id)) for r in records]
    max_total = max(r.max_total for r in records)
    fails = Counter((c.grade_id, c.check) for r in records for c in r.checks if not c.passed)
    names = [f"{g}: {c}" for g, c in sorted({(c.grade_id, c.check) for r in records for c in r.checks})]
    rates = [100 * fails[tuple(n.split(": "))] / len(records) for n in names]
    diag = Counter(d for r in records for d in r.diagnoses)
    review = [r for r in records if r.needs_review]
    parts = [
        f"<p>{len(records)} submissions; mean {mean(totals):.1f}, median {median(totals):g} of {max_total} "
        "(after late penalties); "
        f"{sum(t == max_total for t in totals)} full marks; {len(review)} need review.</p>",
        image(svg.histogram(totals, max_total), "score histogram"),
        image(svg.bars(names, rates, "Failure rate per check", "% of students failing"), "failure rates"),
    ]
    if diag:
        labels, counts = zip(*diag.most_common())
        parts.append(image(svg.bars(labels, counts, "Misconceptions diagnosed", "students"), "misconceptions"))
    parts.append("<h2>Students needing review</h2>")
    parts.append(table(["student", "total", "why"], (
        [f'<a href="feedback/{escape(quote(r.student_id.encode("utf-8", "surrogateescape"), safe=""))}/index.html">{escape(r.student_id)}</a>',
         f'{score(r.total, late.get(r.student_id)):g}/{r.max_total}', "<br>".join(escape(p) for p in r.integrity)]
        for r in review)) if review else "<p>None.</p>")
    parts += _lateness_section(records, late) + _delivery_section(delivery)
    return page(f"Grading report: {assignment}", "\n".join(parts))


def _lateness_section(records: list[Record], late: dict[str, Lateness]) -> list[str]:
    """Late submissions and unreadable submission times, as nbgrader's gradebook and timestamp.txt say."""
    rows = [[escape(r.student_id), escape(late[r.student_id].describe())]
            for r in records if r.student_id in late and late[r.student_id].describe()]
    return ["<h2>Late submissions and submission times</h2>",
            table(["student", "submission time"], rows) if rows else "<p>None late (or no due date set).</p>"]


def _delivery_section(delivery: list[str]) -> list[str]:
    if not delivery:
        return []
    items = "".join(f"<li>{escape(d)}</li>" for d in delivery)
    return [f"<h2>Feedback nbgrader cannot deliver</h2><ul>{items}</ul>"]


def write_report(path: Path, records: list[Record], assignment: str, late: dict[str, Lateness] | None = None,
                 delivery: list[str] = ()) -> None:
    atomic_write(path, report_html(records, assignment, late, delivery))
