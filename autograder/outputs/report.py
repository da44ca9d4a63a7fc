"""The instructor's report: score histogram, failure rates, misconceptions, failures nobody
explained yet, students to review, late submissions."""
from __future__ import annotations

from pathlib import Path
from statistics import mean, median
from urllib.parse import quote

from ..gradebook.lateness import Lateness, score
from ..grading.rubric import check_title
from ..inert import told_apart
from ..records import Record, atomic_write
from . import svg
from .classstats import failure_rates, misconception_counts, undiagnosed
from .html import escape, figure, message, page, table


def _link(student_id: str, names: dict[str, str]) -> str:
    """A link to the student's page, the id shown as ``inert.told_apart`` shows it in this class."""
    href = quote(student_id.encode("utf-8", "surrogateescape"), safe="")      # any folder name, UTF-8 or not
    return f'<a href="feedback/{escape(href)}/index.html">{escape(names[student_id])}</a>'


def _rates(records: list[Record]) -> list[str]:
    rates, clean = failure_rates(records)
    out = []
    if rates:
        labels, values = zip(*rates)
        out.append(figure(svg.bars(labels, values, "Failure rate per check, highest first",
                                   "% of students failing", "%", top=100),
                          svg.bar_table(labels, values, "% of students failing", "%")))
    if clean:
        out.append(f"<p>{clean} checks were passed by every student.</p>")
    return out


def _misconceptions(records: list[Record]) -> list[str]:
    found = misconception_counts(records)
    if not found:
        return []
    labels, counts = zip(*found)
    return [figure(svg.bars(labels, counts, "Misconceptions diagnosed, most frequent first", "students"),
                   svg.bar_table(labels, counts, "students"))]


def _undiagnosed(records: list[Record], names: dict[str, str]) -> list[str]:
    found = undiagnosed(records)
    head = ["<h2>Failures with no diagnosis</h2>", "<p>Wrong answers that no catalogue entry reproduces: "
            "what the misconception catalogue should learn next.</p>"]
    if not found:
        return head + ["<p>None: every failure was diagnosed, unfinished or is under review.</p>"]
    return head + [table(["check", "students", "one of their messages"], (
        [escape(check_title(u.grade_id, u.check)), ", ".join(_link(s, names) for s in u.students), message(u.example)]
        for u in found))]


def _review(records: list[Record], late: dict[str, Lateness], names: dict[str, str]) -> list[str]:
    """The students the summary says need review, each once; then those a person has graded since (the
    summary's "reviewed by hand"), which the section listed among them before."""
    def rows(chosen):
        return ([_link(r.student_id, names), f"{score(r.total, late.get(r.student_id)):g}/{r.max_total}",
                 "<br>".join(escape(p) for p in r.for_instructor)] for r in chosen)
    waiting = [r for r in records if r.open_review]
    done = [r for r in records if r.needs_review and r.reviewed]
    out = [f"<h2>Students needing review ({len(waiting)})</h2>",
           table(["student", "total", "why"], rows(waiting)) if waiting else "<p>None.</p>"]
    if done:
        out += [f"<h2>Reviewed by hand ({len(done)})</h2>", table(["student", "total", "why it was flagged"], rows(done))]
    return out


def _review_count(records: list[Record]) -> str:
    """What the summary table and the review sections say: how many need review, and how many a person graded."""
    waiting, done = sum(r.open_review for r in records), sum(r.needs_review and r.reviewed for r in records)
    return f"{waiting} need review" + (f" ({done} more reviewed by hand)" if done else "")


def report_html(records: list[Record], assignment: str, late: dict[str, Lateness] | None = None,
                delivery: list[str] = (), before=None) -> str:
    """``before``: what feedback on submit saw (``journal.summary.BeforeDeadline``), if it ran."""
    if not records:
        return page(f"Grading report: {assignment}", "<p>No submissions were graded.</p>")
    late, names = late or {}, told_apart((r.student_id for r in records), letters=True)
    totals = [score(r.total, late.get(r.student_id)) for r in records]
    max_total = max(r.max_total for r in records)
    parts = [
        f"<p>{len(records)} submissions; mean {mean(totals):.1f}, median {median(totals):g} of {max_total} "
        "(after late penalties); "
        f"{sum(t >= max_total for t in totals)} full marks; {_review_count(records)}.</p>",
        figure(svg.histogram(totals, max_total), svg.histogram_table(totals))]
    parts += _rates(records) + _misconceptions(records) + _undiagnosed(records, names) + _review(records, late, names)
    parts += _lateness_section(records, late, names) + _delivery_section(delivery) + _before_deadline(before)
    return page(f"Grading report: {assignment}", "\n".join(parts))


def _before_deadline(before) -> list[str]:
    """Checks used per student, and the misconceptions students fixed after feedback on submit named them."""
    if before is None:
        return []
    students = sorted(set(before.checks) | set(before.refused))
    names = told_apart([*students, *(s for who in before.fixed.values() for s in who)], letters=True)
    used = table(["student", "checks used", "turned away by the limit"],
                 ([escape(names[s]), str(before.checks.get(s, 0)), str(before.refused.get(s, 0))] for s in students))
    named = sorted(before.named, key=lambda m: (-len(before.named[m]), m))
    fixed = table(["misconception", "students it was named to", "fixed after feedback", "who fixed it"], (
        [escape(m), str(len(before.named[m])), str(len(before.fixed.get(m, ()))),
         escape(", ".join(names[s] for s in sorted(before.fixed.get(m, ()))))] for m in named))
    return ["<h2>Before the deadline</h2>",
            f"<p>Feedback on submit: {sum(before.checks.values())} checks by {len(students)} students.</p>",
            used, "<p>Misconceptions fixed after feedback: a check's pages named it, and a submission of the "
            "same student that arrived after those pages were published no longer showed it.</p>", fixed if named else "<p>No check named a misconception.</p>"]


def _lateness_section(records: list[Record], late: dict[str, Lateness], names: dict[str, str]) -> list[str]:
    """Late submissions and unreadable submission times, as nbgrader's gradebook and timestamp.txt say."""
    rows = [[escape(names[r.student_id]), escape(late[r.student_id].describe())]
            for r in records if r.student_id in late and late[r.student_id].describe()]
    return ["<h2>Late submissions and submission times</h2>",
            table(["student", "submission time"], rows) if rows else "<p>None late (or no due date set).</p>"]


def _delivery_section(delivery: list[str]) -> list[str]:
    if not delivery:
        return []
    items = "".join(f"<li>{escape(d)}</li>" for d in delivery)
    return [f"<h2>Feedback nbgrader cannot deliver</h2><ul>{items}</ul>"]


def write_report(path: Path, records: list[Record], assignment: str, late: dict[str, Lateness] | None = None,
                 delivery: list[str] = (), before=None) -> None:
    atomic_write(path, report_html(records, assignment, late, delivery, before))
