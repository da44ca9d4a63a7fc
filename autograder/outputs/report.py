"""The instructor's report: score histogram, failure rates, misconceptions, students to review."""
from __future__ import annotations

from collections import Counter
from html import escape
from pathlib import Path
from statistics import mean, median
from urllib.parse import quote

from ..records import atomic_write
from . import svg
from .html import image, page, table


def report_html(records: list[dict], assignment: str) -> str:
    if not records:
        return page(f"Grading report: {assignment}", "<p>No submissions were graded.</p>")
    totals = [r["total"] for r in records]
    max_total = max(r["max_total"] for r in records)
    fails = Counter((c["grade_id"], c["check"]) for r in records for c in r["checks"] if not c["passed"])
    names = [f"{g}: {c}" for g, c in sorted({(c["grade_id"], c["check"]) for r in records for c in r["checks"]})]
    rates = [100 * fails[tuple(n.split(": "))] / len(records) for n in names]
    diag = Counter(d for r in records for d in {c["diagnosis"] for c in r["checks"] if c.get("diagnosis")})
    review = [r for r in records if r["needs_review"]]
    parts = [
        f"<p>{len(records)} submissions; mean {mean(totals):.1f}, median {median(totals):g} of {max_total}; "
        f"{sum(t == max_total for t in totals)} full marks; {len(review)} need review.</p>",
        image(svg.histogram(totals, max_total), "score histogram"),
        image(svg.bars(names, rates, "Failure rate per check", "% of students failing"), "failure rates"),
    ]
    if diag:
        labels, counts = zip(*diag.most_common())
        parts.append(image(svg.bars(labels, counts, "Misconceptions diagnosed", "students"), "misconceptions"))
    parts.append("<h2>Students needing review</h2>")
    parts.append(table(["student", "total", "why"], (
        [f'<a href="feedback/{escape(quote(r["student_id"], safe=""))}/index.html">{escape(r["student_id"])}</a>',
         f'{r["total"]}/{r["max_total"]}', "<br>".join(escape(p) for p in r.get("integrity", []))]
        for r in review)) if review else "<p>None.</p>")
    return page(f"Grading report: {assignment}", "\n".join(parts))


def write_report(path: Path, records: list[dict], assignment: str) -> None:
    atomic_write(path, report_html(records, assignment))
