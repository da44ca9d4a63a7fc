"""nbgrader's autograded notebooks, written by the hardened grader: what formgrader and generate_feedback read.

``nbgrader autograde`` leaves ``autograded/<student>/<assignment>/<notebook>.ipynb`` (the submission
with its test and read-only cells put back from the course, the grade cells' outputs holding the
points), ``timestamp.txt`` and ``submission_secret.txt``. Formgrader lists a submission as graded only
when that folder exists, and opens a notebook for manual grading only when its file does;
generate_feedback renders these files and copies the secret beside its pages, for release_feedback.

Here they are built from what intake checked, never from the raw files: every cell the student
handed in, in order, as plain text (nothing of it is run outside the sandbox; the student's own
markdown is a fenced text block, so no page renders a tag of theirs); each test or read-only
cell as the release shows it (hidden tests and reference code never appear); each grade cell's
output the points its checks earned (``execute_result``, which nbgrader reads as partial credit) and
one line per check. A notebook that could not be read is the release notebook with a note saying
why, so a person can still open and grade it.
"""
from __future__ import annotations

import json
import re
import string
import textwrap
from pathlib import Path

from ..course.notebooks import cell_source, nbgrader_meta
from ..intake.cells import normalise
from ..inert import visible, visible_bytes
from ..intake.secret import SECRET
from ..records import Record, earned as earned_points, laid_out
from .wholefolder import replace_folder

NOTE_ID = "autograder-review-note"                 # why the notebook needs a person, in words a student may read
SUSPECTED_ID = "autograder-review-suspected"       # what the grader suspects: the instructor's only
HEADING = "**The hardened grader marked this notebook for review:**"
AWAITS = "**This notebook awaits review by an instructor.**"
OUTPUT_COLUMNS = 100      # a grade cell's lines, wrapped: formgrader's panel shows about 110 columns, unwrapped
_SURROGATE = re.compile("[\ud800-\udfff]")


def autograded_notebook(given: dict, cells: list | None, record: Record, notebook: str) -> dict:
    """One autograded notebook: the student's checked ``cells`` (None: the notebook could not be read)
    laid into the handout ``given``, with the record's scores as the grade cells' outputs."""
    course_cells = {_grade_id(c): c for c in given["cells"] if _grade_id(c)}
    if cells is None:
        laid = [_course_cell(c, record) for c in given["cells"]]
    else:
        laid, seen = [], set()
        for cell in cells:
            gid = cell.nbgrader.grade_id if cell.nbgrader else None
            if gid in course_cells and gid not in seen:
                seen.add(gid)
                laid.append(_course_cell(course_cells[gid], record, student_source=cell.source))
            else:
                laid.append(_student_cell(cell))
        # a test cell the student deleted is graded after the last cell: it stands there here too
        laid += [_course_cell(c, record) for gid, c in course_cells.items()
                 if gid not in seen and nbgrader_meta(c).get("grade")]
    make_inert(laid, given)
    no_grade_controls(laid)
    laid[:0] = review_notes(record, notebook)
    return {"cells": _unique_ids(laid), "metadata": given.get("metadata", {}), "nbformat": 4,
            "nbformat_minor": max(int(given.get("nbformat_minor", 5)), 5)}


def write_autograded(folder: Path, notebooks: dict[str, dict], timestamp: str = "",
                     secret: bytes | None = None) -> None:
    """``folder`` holding each notebook, ``timestamp.txt`` and the submission's ``secret`` (as nbgrader
    autograde copies them: ``generate_feedback`` copies the secret on, and ``release_feedback`` needs it),
    replaced whole, so a stop or a kill never leaves some of this run's notebooks beside the last run's;
    OutputError if it cannot be written. ``secret``: only the submission's own (``Intake.secret``)."""
    files = {f"{name}.ipynb": strict_utf8(laid_out(nb, ensure_ascii=False)) + "\n" for name, nb in notebooks.items()}
    replace_folder(Path(folder), {**files, **({"timestamp.txt": timestamp} if timestamp else {}),
                                  **({SECRET: secret} if secret else {})})


def strict_utf8(text: str) -> str:
    """JSON ``text`` with each lone surrogate (a student's "\\ud800", valid JSON) written as the text that
    ``visible_bytes`` shows (``\\ud800``, an undecodable byte as ``\\xff``): nbconvert writes each page as
    strict UTF-8, and a surrogate left in a notebook made generate_feedback fail for its student. A
    surrogate stands only inside a JSON string, where the escaped backslash is read as a backslash."""
    return _SURROGATE.sub(lambda m: json.dumps(visible_bytes(m.group()))[1:-1], text)


def _grade_id(cell: dict) -> str | None:
    return nbgrader_meta(cell).get("grade_id")


def _course_cell(cell: dict, record: Record, student_source: str | None = None) -> dict:
    """A cell of the handout: the student's answer in a solution cell, the course's text elsewhere (as
    nbgrader's OverwriteCells puts it back), and a grade cell's points as its output."""
    meta = nbgrader_meta(cell)
    source = student_source if meta.get("solution") and student_source is not None else cell_source(cell)
    out = {"cell_type": cell["cell_type"], "id": cell.get("id"), "source": source,
           "metadata": json.loads(json.dumps(cell.get("metadata", {})))}          # a copy: the handout stays as read
    if cell["cell_type"] == "code":
        graded = grade_outputs(record, meta["grade_id"]) if meta.get("grade") else []
        out.update(execution_count=None, outputs=graded)
    elif "attachments" in cell:
        out["attachments"] = cell["attachments"]
    return out


def grade_outputs(record: Record, grade_id: str) -> list[dict]:
    """What the hidden-test cell prints and returns when nbgrader runs it: a line per check, then the points."""
    checks = [c for c in record.checks if c.grade_id == grade_id]
    if not checks:
        return []                                    # a visible-test cell (0 points): nothing to show
    lines = "".join(_wrapped(visible(f"[{'PASS' if c.passed else 'FAIL'}] {c.check} ({c.points:g}/{c.max_points:g}): "
                                     f"{c.message}")) for c in checks)      # a student's exception text: inert
    earned = float(earned_points(checks))
    return [{"name": "stdout", "output_type": "stream", "text": lines},
            {"data": {"text/plain": repr(earned)}, "execution_count": None, "metadata": {},
             "output_type": "execute_result"}]


def _wrapped(text: str) -> str:
    return "".join(textwrap.fill(line, OUTPUT_COLUMNS, subsequent_indent="    ") + "\n" for line in text.splitlines())


def _student_cell(cell) -> dict:
    """A cell of the student's own, as text: no nbgrader settings of the student's are kept."""
    kind = cell.cell_type if cell.cell_type in ("code", "markdown", "raw") else "raw"
    out = {"cell_type": kind, "id": None, "metadata": {}, "source": cell.source}
    if kind == "code":
        out.update(execution_count=None, outputs=[])
    return out


def review_notes(record: Record, notebook: str, taken: list | None = None) -> list[dict]:
    """The markdown cells put first in a notebook that needs a person (none when it does not): why, in a
    cell a student's page may show (``NOTE_ID``: reasons that accuse nobody), and what the grader suspects
    about integrity in a cell of its own (``SUSPECTED_ID``), which generate_feedback's ``ForStudents``
    leaves out. Reasons are shown as text: a file name in a reason is never markup."""
    reasons = record.review_findings(notebook)
    if not reasons:
        return []
    told = [f.message for f in reasons if not f.accuses]
    suspected = [f.message for f in reasons if f.accuses]
    cells = [_note(NOTE_ID, HEADING + (f"\n\n{as_list(told)}" if told else ""), taken)]
    if suspected:
        cells.append(_note(SUSPECTED_ID, "**What the grader suspects (for you only: the student's page never shows "
                           "it; write a comment to tell the student):**\n\n" + as_list(suspected), taken))
    return cells


def as_list(reasons: list[str]) -> str:
    """Markdown that shows each reason as a list item of plain words, wrapped to the width of formgrader's
    panel (a fenced block ran on past its edge): every character markdown, HTML or MathJax could read
    as markup written so that it is shown as itself (a reason may hold a name the student chose)."""
    return "\n".join(f"- {as_words(r)}" for r in reasons)


_LITERAL = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "$": "`$`", "\\": "`\\`"}   # MathJax never reads code: no
#                                                     $...$, \(...\) or \begin{...} of a student's is typeset


def as_words(text: str) -> str:
    """``text`` on one line as markdown shows it exactly: hidden characters (bidi, zero-width, escape
    sequences) as escapes (``inert.visible``), each ASCII punctuation mark escaped (CommonMark), &, < and >
    as entities, $ and the backslash as code (MathJax reads neither there)."""
    return "".join(_LITERAL.get(ch) or ("\\" + ch if ch in string.punctuation else ch)
                   for ch in " ".join(visible(text).split()))


def no_grade_controls(cells: list) -> None:
    """A test cell worth no points (a visible test) is read-only in the autograded copy, not a grade cell:
    formgrader asks for no score beside it. The gradebook keeps its grade (0 of 0), as nbgrader's own
    autograde records it, so export, manual grading and ``grade --resume`` are unchanged."""
    for cell in cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution") and not float(meta.get("points") or 0):
            meta["grade"] = False
            meta.pop("points", None)


def _note(cid: str, source: str, taken: list | None) -> dict:
    while taken and cid in taken:
        cid += "-1"
    return {"cell_type": "markdown", "id": cid, "metadata": {}, "source": source}


def make_inert(cells: list[dict], given: dict) -> None:
    """Student text that formgrader and generate_feedback would render as HTML is shown as text instead: a
    markdown or raw cell the handout does not hold becomes a markdown cell holding a fenced text block, which
    every renderer shows as text (no tag, link or image of the student's is ever rendered, in any template).
    A raw cell is not left raw: nbconvert's HTML exporters copy a raw cell's source into the page as it
    is when its format is empty or HTML, and a renderer's defaults decide that, not its metadata. A code cell
    of the student's keeps its text, every hidden character in it (a bidi override) shown as an escape.
    Every student string reaches a notebook through ``inert.visible``, as it reaches our pages (``html.escape``)."""
    handed = {(c["cell_type"], normalise(cell_source(c))) for c in given["cells"]
              if c["cell_type"] in ("markdown", "raw", "code")}
    for cell in cells:
        kind = cell["cell_type"]
        if kind == "code" and (kind, normalise(cell["source"])) not in handed:
            cell["source"] = visible(cell["source"])         # a student's bidi reorders the code a person reads
        elif kind in ("markdown", "raw") and (kind, normalise(cell["source"])) not in handed:
            cell["cell_type"], cell["source"] = "markdown", as_text(cell["source"])
            cell.pop("attachments", None)
            for key in ("format", "raw_mimetype"):
                cell.get("metadata", {}).pop(key, None)


def as_text(text: str) -> str:
    """Markdown that shows ``text`` exactly: a fenced block whose fence is longer than any run of backticks,
    every hidden character in it (a bidi override reorders even a code block; an escape sequence) an escape."""
    text = visible(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def _unique_ids(cells: list[dict]) -> list[dict]:
    """nbformat 4.5 cell ids, unique in the notebook (the course's where it gave one)."""
    seen = set()
    for i, cell in enumerate(cells):
        cid = cell.get("id")
        if not isinstance(cid, str) or not cid or cid in seen:
            cid = f"cell-{i}"
            while cid in seen:
                cid += "x"
        cell["id"] = cid
        seen.add(cid)
    return cells
