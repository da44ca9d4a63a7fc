"""Per-student feedback pages: every check, its points and what to change; never a test's source."""
from __future__ import annotations

from html import escape
from pathlib import Path

from ..inert import terminal
from ..lateness import Lateness, score
from ..records import Record, atomic_write
from . import svg
from .html import image, page, table

def check_rows(checks):
    for c in checks:
        status = '<span class="pass">passed</span>' if c.passed else '<span class="fail">failed</span>'
        diag = f' <span class="tag">{escape(c.diagnosis)}</span>' if c.diagnosis else ""
        message = "" if c.passed else escape(c.message) + diag
        yield [escape(c.grade_id), escape(c.check.replace("_", " ")), status,
               f"{c.points}/{c.max_points}", message]


def plots(checks) -> list[str]:
    """Heatmaps for failed masking and weights checks that kept the student's weights."""
    out, seen = [], set()
    for c in checks:
        d = c.details or {}
        if c.passed or "student_weights" not in d or c.grade_id in seen:
            continue
        seen.add(c.grade_id)
        title = f"{c.grade_id}: {c.check.replace('_', ' ')}"
        out.append(image(svg.heatmaps(d["student_weights"], d.get("expected_weights", []), title), title))
    return out


def feedback_html(record: Record, late: Lateness | None = None) -> str:
    parts = [f"<p><strong>Total: {score(record.total, late):g} / {record.max_total}</strong></p>"]
    if late and late.describe():
        parts.append(f"<p>Submission time: {escape(late.describe())}.</p>")
    if record.needs_review:
        items = "".join(f"<li>{escape(p)}</li>" for p in record.integrity)
        parts.append(f'<div class="review"><p>An instructor will review this submission:</p><ul>{items}</ul></div>')
    cats = ", ".join(f"{k} {v.earned}/{v.max}" for k, v in record.categories.items())
    parts.append(f"<p>By category: {escape(cats)}</p>")
    parts.append(table(["cell", "check", "result", "points", "what to change"], check_rows(record.checks)))
    parts += plots(record.checks)
    if record.notes:
        parts.append("<h2>Errors in your notebook</h2><ul>" +
                     "".join(f"<li>{escape(n)}</li>" for n in record.notes) + "</ul>")
    output = terminal(record.output)
    if output.strip():
        parts.append(f"<h2>Your code's output</h2><pre>{escape(output[:20000])}</pre>")
    return page(f"Feedback for {record.student_id}: scaled dot-product attention", "\n".join(parts))


def write_feedback(path: Path, record: Record, late: Lateness | None = None) -> None:
    atomic_write(path, feedback_html(record, late))
