"""Feedback in nbgrader's layout, so nbgrader's own commands deliver it, each page to its owner only.

``<course>/feedback/<student>/<assignment>/<notebook>.html``: one page per notebook, made from our
record, beside two files of the submission that ``nbgrader release_feedback`` requires:
``timestamp.txt`` (it logs it) and ``submission_secret.txt`` (it names each released page by a hash
of the secret and the notebook's name, which ``nbgrader fetch_feedback`` recomputes from the
student's copy of the secret). Only a submission whose secret is usable and its own
(``intake.secret.deliverable``) gets pages there: a page without a secret makes ``release_feedback``
stop with FileNotFoundError for every student after it, and a secret two submissions share would
deliver one student's feedback to the other. For any other submission the folder is emptied of
pages and a note says why, for the instructor, who hands out ``<out>/feedback/<student>/`` instead.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from ..course.settings import Course
from ..gradebook.lateness import Lateness
from ..inert import shown, shown_id
from ..intake.secret import SECRET
from ..records import Record, atomic_write
from .feedback import checks_table, plots, review_block, start_here
from .html import escape, page


def feedback_folder(course: Course, student: str, assignment: str) -> Path:
    return course.root / course.setting("CourseDirectory", "feedback_directory", "feedback") / student / assignment


def write_notebook_feedback(course: Course, assignment: str, record: Record, lateness: Lateness | None,
                            secret: bytes | str) -> str | None:
    """Every notebook's page for one student when ``secret`` (bytes) is theirs alone; else (``secret`` says
    why not) no page is left there, and the note for the instructor is returned."""
    student = record.student_id
    folder = feedback_folder(course, student, assignment)
    if not isinstance(secret, bytes):
        removed = _undeliverable_pages(folder)
        gone = f"; {removed} page(s) nbgrader could not deliver were removed from {folder}" if removed else ""
        return (f"{shown(student)}: {secret}, so nbgrader release_feedback cannot deliver this feedback{gone}; "
                f"hand out feedback/{shown_id(student)}/ yourself")
    atomic_write(folder / "timestamp.txt", lateness.submitted if lateness else "")   # before any page:
    atomic_write(folder / SECRET, secret)                 # release_feedback never sees a page without them
    for notebook in sorted(record.notebooks):
        atomic_write(folder / f"{notebook}.html", notebook_html(record, notebook, lateness))
    return None


def _undeliverable_pages(folder: Path) -> int:
    """Remove the pages (and the secret) in a feedback folder nbgrader cannot deliver; how many pages."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    pages = [e for e in entries if e.name.endswith(".html") and e.is_file(follow_symlinks=False)]
    for entry in [*pages, *(e for e in entries if e.name == SECRET)]:
        try:
            os.unlink(entry.path)
        except OSError:
            pass
    return len(pages)


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
