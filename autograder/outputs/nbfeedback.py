"""Feedback in nbgrader's layout, so nbgrader's own commands deliver it, each page to its owner only.

``<course>/feedback/<student>/<assignment>/<notebook>.html``: one page per notebook, made from our
record, named as the student named the notebook (a renamed ``ex1_attention (1).ipynb`` gets
``ex1_attention (1).html``, the page ``fetch_feedback`` looks for), beside two files of the submission that ``nbgrader release_feedback`` requires:
``timestamp.txt`` (it logs it) and ``submission_secret.txt`` (it names each released page by a hash
of the secret and the notebook's name, which ``nbgrader fetch_feedback`` recomputes from the
student's copy of the secret). In a class collected through the exchange, only a submission whose secret
is usable and its own (``intake.secret.deliverable``) gets pages there: a page without a secret makes
``release_feedback`` stop with FileNotFoundError for every student after it, and a secret two submissions
share would deliver one student's feedback to the other. For any other submission the folder is emptied
of pages and a note says why, for the instructor, who hands out ``<out>/feedback/<student>/`` instead.
A class collected without the exchange (an LMS download, ``nbgrader zip_collect``: no submission has a
secret) gets every page there with its ``timestamp.txt``, as ``generate_feedback`` writes them, for the
instructor to zip and upload.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..course.settings import Course
from ..gradebook.lateness import Lateness
from ..inert import is_text, shown, shown_id
from ..intake.secret import SECRET
from ..records import Record
from .feedback import by_hand, checks_table, plots, review_block, shortfall, start_here
from .html import escape, page
from .wholefolder import replace_folder


def feedback_folder(course: Course, student: str, assignment: str) -> Path:
    return course.root / course.setting("CourseDirectory", "feedback_directory", "feedback") / student / assignment


def write_notebook_feedback(course: Course, assignment: str, record: Record, lateness: Lateness | None,
                            secret: bytes | str | None) -> list[str]:
    """Every notebook's page for one student when ``secret`` (bytes) is theirs alone, or is None (a class
    collected without the exchange: no secret is written), each named as the student named the notebook
    (``page_name``); else (``secret`` says why not) no page is left there. Returns the notes for the
    instructor: why nbgrader cannot deliver this student's pages, or some."""
    student = record.student_id
    folder = feedback_folder(course, student, assignment)
    if isinstance(secret, str):
        removed = _undeliverable_pages(folder)
        gone = f"; {removed} page(s) nbgrader could not deliver were removed from {folder}" if removed else ""
        return [f"{shown(student)}: {secret}, so nbgrader release_feedback cannot deliver this feedback{gone}; "
                f"hand out feedback/{shown_id(student)}/ yourself"]
    notes, pages = [], {}
    for notebook in sorted(record.notebooks):
        name, why = page_name(record, notebook)
        pages[f"{name}.html"] = notebook_html(record, notebook, lateness)
        if why:
            notes.append(f"{shown(student)}: {why}, so nbgrader fetch_feedback cannot deliver the page of "
                         f"{notebook}.ipynb (written as {notebook}.html); hand it out yourself")
    # replaced whole, as nbgrader's generate_feedback does: release_feedback never sees a page without its
    # timestamp and secret, one student's pages of two runs, nor a page of a notebook since renamed
    kept = {SECRET: secret} if secret is not None else {}
    replace_folder(folder, {"timestamp.txt": lateness.submitted if lateness else "", **kept, **pages})
    return notes


def page_name(record: Record, notebook: str) -> tuple[str, str | None]:
    """The name of a notebook's page: the name the student submitted it under (``fetch_feedback`` looks
    for the page of each ``*.ipynb`` of the student's own copy by that name), and why nbgrader cannot
    deliver it (then the page takes the notebook's own name; None when it can)."""
    file = record.files.get(notebook) or f"{notebook}.ipynb"
    why = None
    if not file.endswith(".ipynb"):
        why = f"the notebook was submitted as {shown(file)}, which fetch_feedback does not look for (*.ipynb)"
    elif file.startswith("."):
        why = f"the notebook was submitted as {shown(file)}, a hidden file that release_feedback skips"
    elif not is_text(file):
        why = f"the notebook was submitted as {shown(file)}, a name that is not UTF-8, which nbgrader cannot hash"
    return (notebook if why else file[: -len(".ipynb")]), why


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
        off = (f"{penalty:g} point{'' if penalty == 1 else 's'} off this notebook" if penalty
               else "nothing off this notebook")
        parts.append(f"<p>Late: {escape(when)}; {off}.</p>")
    elif when:                                  # lateness unknown, or a note on the time: never silence
        parts.append(f"<p>Submission time: {escape(when)}.</p>")
    parts += [start_here(checks, shortfall(record, notebook, penalty)), _notes(record, notebook), by_hand(record, notebook),
              review_block(record, notebook), checks_table(checks), *plots(checks)]
    return page(f"Feedback for {shown_id(record.student_id)}: {notebook}.ipynb", "\n".join(parts))


def _notes(record: Record, notebook: str) -> str:
    """The record's notes on this notebook (a renamed copy was graded, an error in its cells)."""
    names = {f"{notebook}.ipynb", shown(record.files.get(notebook, ""))}
    mine = [n for n in record.notes if any(name in n for name in names)]
    return "<ul>" + "".join(f"<li>{escape(n)}</li>" for n in mine) + "</ul>" if mine else ""
