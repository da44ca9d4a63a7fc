"""What a student sees before the deadline (``c.FeedbackOnSubmit.show``), one page per notebook.

- ``full``: the notebook's page as ``grade`` writes it after the deadline (score ``k / m``, each
  failing check's advice and misconception, heatmaps);
- ``diagnosis``: the same advice and misconceptions, no points;
- ``visible``: only the results of the notebook's visible tests (the cells the student already has).

Never a hidden test or the reference code: the pages are built from the record's student-facing
messages only. Each page says when it was made, and that it is pre-deadline feedback (or, for a
submission after the due date with ``after_due_date = True``, feedback on a late submission).
"""
from __future__ import annotations

from datetime import datetime, timezone

from ..gradebook.timestamps import written_time
from ..inert import shown
from ..outputs.feedback import check_rows, plots, review_block, start_here
from ..outputs.html import escape, message, page, table
from ..outputs.nbfeedback import notebook_html
from ..records import Record
from ..run.job import VisibleResult


MARK = b'<p class="presubmit">'         # every page of ours has it; release_feedback's pages do not


def when(t: float | datetime) -> str:
    """A time for a page, to the second (``t``: epoch seconds, or a naive UTC datetime), by the one writer."""
    at = t if isinstance(t, datetime) else datetime.fromtimestamp(t, timezone.utc)
    return written_time(at.replace(microsecond=0)).replace(".000000", "")


def banner(made: float, due: datetime | None = None) -> str:
    """The line atop each page; ``due``: the due date the submission came after (feedback after it)."""
    if due is not None:
        return (f'<p class="presubmit"><strong>Feedback on a late submission</strong>, made {when(made)} when you '
                f"submitted, after the due date ({when(due)}). It is not your grade: your instructor grades the "
                "submission they collect, with any penalty for lateness.</p>")
    return (f'<p class="presubmit"><strong>Pre-deadline feedback</strong>, made {when(made)} when you submitted. '
            "It is not your grade: your instructor grades the submission you hand in last, after the due "
            "date.</p>")


def feedback_page(record: Record, notebook: str, show: str, made: float,
                  visible: list[VisibleResult] = (), due: datetime | None = None) -> str:
    if show == "full":
        return notebook_html(record, notebook, None, banner=banner(made, due))
    title = f"Feedback for {record.student_id}: {notebook}.ipynb"
    if show == "diagnosis":
        checks = [c for c in record.checks if c.notebook == notebook]
        rows = ([cell, check, result, advice] for cell, check, result, _points, advice in check_rows(checks))
        body = [banner(made, due), start_here(checks), review_block(record, notebook),
                table(["cell", "check", "result", "what to change"], rows), *plots(checks)]
        return page(title, "\n".join(body))
    return page(title, "\n".join([banner(made, due), _visible_table(visible)]))


def _visible_table(results: list[VisibleResult]) -> str:
    if not results:
        return "<p>This notebook has no visible tests.</p>"
    word = {True: '<span class="pass">passed</span>', False: '<span class="fail">failed</span>',
            None: "did not run"}
    rows = ([escape(r.grade_id), word[r.passed], message(r.message)] for r in results)
    return ("<p>The results of the visible tests in your notebook, run on your submission:</p>"
            + table(["test cell", "result", "message"], rows))


def unknown_notebook_page(student: str, notebook_id: str, made: float, due: datetime | None = None) -> str:
    return page(f"Feedback for {student}: {notebook_id}.ipynb", banner(made, due) +
                f"<p>{escape(shown(notebook_id + '.ipynb'))} is not one of the assignment's notebooks, so it was "
                "not checked.</p>")


def limit_page(student: str, notebook_id: str, made: float, next_at: float, limit, due: datetime | None = None) -> str:
    """``due``: the due date, given when the next check would fall after it (no check comes then)."""
    then = (f"Your next check would be after {when(next_at)}, which is after the due date ({when(due)}): no "
            "check comes then, so there is none left before the due date; your instructor's feedback comes "
            "with your grade." if due is not None else
            f"Your next check is possible after {when(next_at)}: submit again then.")
    return page(f"Feedback for {student}: {notebook_id}.ipynb", banner(made) +
                f"<p>This submission was received but not checked: you have used your {escape(str(limit))} "
                f"checks. {then}</p>")


def closed_page(student: str, notebook_id: str, made: float, due: str) -> str:
    return page(f"Feedback for {student}: {notebook_id}.ipynb", f'<p class="presubmit">Made {when(made)} when you submitted.</p>'
                f"<p>This submission was received after the due date ({escape(due)}), so it was not checked "
                "before grading; your instructor's feedback comes with your grade.</p>")
