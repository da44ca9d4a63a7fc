"""Feedback in nbgrader's layout, so nbgrader's own commands deliver it.

``<course>/feedback/<student>/<assignment>/<notebook>.html``: one page per notebook, made from our
record, beside two files of the submission that ``nbgrader release_feedback`` requires:
``timestamp.txt`` (it logs it) and ``submission_secret.txt`` (it names each released page by a hash
of the secret and the notebook's name, which ``nbgrader fetch_feedback`` recomputes from the
student's copy of the secret). A submission without a secret (not collected through nbgrader's
exchange) still gets its pages, and a note says nbgrader cannot deliver them.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..course.settings import Course
from ..gradebook.lateness import Lateness
from ..gradebook.timestamps import read_small
from ..inert import shown_id
from ..records import Record, atomic_write
from .feedback import checks_table, plots, review_block, start_here
from .html import escape, page

SECRET = "submission_secret.txt"
_HEX = re.compile(rb"[0-9a-f]{16,256}")


def feedback_folder(course: Course, student: str, assignment: str) -> Path:
    return course.root / course.setting("CourseDirectory", "feedback_directory", "feedback") / student / assignment


def write_notebook_feedback(course: Course, assignment: str, record: Record,
                            lateness: Lateness | None) -> str | None:
    """Every notebook's page for one student; a note when nbgrader will not be able to deliver them."""
    student = record.student_id
    folder = feedback_folder(course, student, assignment)
    for notebook in sorted(record.notebooks):
        atomic_write(folder / f"{notebook}.html", notebook_html(record, notebook, lateness))
    submitted = course.root / "submitted" / student / assignment
    atomic_write(folder / "timestamp.txt", lateness.submitted if lateness else "")
    secret = _secret(submitted / SECRET)
    if secret is None:
        return (f"{student}: no usable {SECRET} in the submission (not collected through nbgrader's "
                "exchange?), so nbgrader release_feedback cannot deliver this feedback; hand it out yourself")
    atomic_write(folder / SECRET, secret)
    return None


def _secret(path: Path) -> bytes | None:
    """The submission's secret when it looks like one nbgrader wrote (hex, bounded), else None."""
    try:
        data = read_small(path, 512).strip()
    except (OSError, ValueError):
        return None
    return data if _HEX.fullmatch(data) else None


def notebook_html(record: Record, notebook: str, lateness: Lateness | None, banner: str = "") -> str:
    """The notebook's page; ``banner`` (HTML) comes first (feedback on submit says what the page is)."""
    checks = [c for c in record.checks if c.notebook == notebook]
    score = record.notebooks[notebook]
    penalty = (lateness.penalties.get(notebook, 0.0) if lateness else 0.0)
    parts = [banner] * bool(banner) + [f"<p><strong>Score: {score.earned - penalty:g} / {score.max}</strong></p>"]
    when = lateness.describe() if lateness else ""
    if lateness and lateness.seconds_late > 0:
        parts.append(f"<p>Late: {escape(when)}; on this notebook {penalty:g} points.</p>")
    elif when:                                  # lateness unknown, or a note on the time: never silence
        parts.append(f"<p>Submission time: {escape(when)}.</p>")
    parts += [start_here(checks), review_block(record), checks_table(checks), *plots(checks)]
    return page(f"Feedback for {shown_id(record.student_id)}: {notebook}.ipynb", "\n".join(parts))
