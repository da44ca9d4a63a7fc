"""Intake of one submission: a folder of notebooks (or one notebook), notebook by notebook.

Each notebook goes through the same steps (find it, read it as a regular
file, check it is nobody else's, decode, parse, check its cells, compare them
with the course's); anything that goes wrong, even a bug here, damages that
notebook only, and intake moves on to the next.
"""
from __future__ import annotations

import os
import traceback
from pathlib import Path

from ..course.view import CourseView
from ..inert import shown
from .bulk import bulk_note
from .cells import cells_of
from .compare import MIN_COPY_LINES, collect_cells, work_lines
from .digest import SubmissionHash, why_bytes
from .expected import notebooks_of
from .files import MAX_NOTEBOOK_BYTES, Budget, LinkRefused
from .integrity import Context, copy_event, link_event, secret_event, source_event, twin_event
from .model import Intake, Refused
from .names import Found
from .parse import digest, read_notebook
from .secret import secret_in
from .take import Taken, levels, names_in, open_submission, take, wanted


def intake_submission(path: Path, view: CourseView, student_id: str | None = None,
                      snapshot: str | None = None) -> Intake:
    """The student's code cells and the submission's damage, against the course as ``view`` has it (its
    notebooks read once per view); raises only CourseError (the course's fault). ``snapshot``: a batch's
    token; its submissions are compared with the class as this process first read it for that batch
    (``integrity.class_index``), instead of reading the class again for each. ``Intake.submission`` is the
    digest of exactly the bytes graded (``digest.SubmissionHash``)."""
    assignment = view.assignment
    ctx = Context(view.root, assignment, student_id, notebooks_of(view), snapshot)
    intake, h = Intake(), SubmissionHash()
    path = Path(os.path.abspath(path))
    try:
        fd, folder, single = open_submission(path, assignment)
    except LinkRefused as exc:
        intake.flag(link_event(exc.link, "the submission folder " + shown(exc.link.name), ctx))
        return _sealed(intake, h, exc)
    except (Refused, OSError) as exc:
        intake.damage(f"The submission folder could not be opened ({_reason(exc)}); nothing was graded.")
        return _sealed(intake, h, exc)
    try:
        if not single and levels(folder, assignment) == 2:        # nbgrader's layout: a secret decides delivery
            secret = secret_in(fd)
            event = secret_event(fd, secret, ctx)
            if event:
                intake.flag(event)
            elif isinstance(secret, bytes):
                intake.secret = secret
        files, crowded = names_in(fd, ctx.notebooks.names)
        if crowded:
            intake.note(crowded)
        found, problem = wanted(path, single, files, ctx.notebooks.names)
        if problem:
            intake.damage(problem)
        budget = Budget()
        for one in found:
            _guarded(fd, folder, one, ctx, intake, h, budget)
        h.timestamp(fd)
    except OSError as exc:
        intake.damage(f"The submission folder could not be listed ({_reason(exc)}); nothing was graded.")
        h.whole(f"unlistable: {exc.strerror}")
    finally:
        os.close(fd)
    intake.submission = h.hexdigest()
    return intake


def _sealed(intake: Intake, h: SubmissionHash, exc: Exception) -> Intake:
    h.whole(why_bytes(exc).decode("utf-8", "surrogateescape"))
    intake.submission = h.hexdigest()
    return intake


def _guarded(fd: int, folder: Path, found: Found, ctx: Context, intake: Intake, h: SubmissionHash,
             budget: Budget) -> None:
    """One notebook's intake; any unexpected error damages this notebook only (its problems are its own)."""
    before = len(intake.findings)
    taken = take(fd, folder, found, budget)
    h.part(found, taken)
    try:
        _notebook(found, taken, ctx, intake)
    except Exception as exc:  # noqa: BLE001 - a surprise in one notebook must not stop the others
        detail = traceback.format_exception_only(type(exc), exc)[-1].strip()[:200]
        intake.damage(f"{found.name}.ipynb could not be read by the grader ({shown(detail, 200)}); it was not "
                      "graded and an instructor must look at it.")
    intake.about(found.name, before)


def _notebook(found: Found, taken: Taken, ctx: Context, intake: Intake) -> None:
    name = found.name
    if found.problem:
        intake.damage(found.problem)
        return
    if found.note:
        intake.note(found.note)
    if not _readable(found, taken, ctx, intake):
        return
    intake.files[name] = found.file
    size = len(taken.raw)
    nb, salvaged = read_notebook(taken, name, intake)          # the bytes freed once decoded
    if size > MAX_NOTEBOOK_BYTES:
        intake.damage(bulk_note(name, size, MAX_NOTEBOOK_BYTES, nb) if nb is not None else
                      f"{name}.ipynb is {size / 1e6:.0f} MB (limit {MAX_NOTEBOOK_BYTES >> 20} MB).")
    if nb is None:
        return
    content = digest(nb)                        # what integrity reads is what is graded: the decoded notebook
    copied = source_event(content, _what(found), ctx)
    if copied:
        intake.flag(copied)
    if copied and copied.withholds:
        return
    expected, before = ctx.notebooks.expected.get(name, {}), len(intake.cells)
    cells = cells_of(nb, name, intake)
    del nb                                      # what is graded is in the cells: the rest is freed now
    intake.layout[name] = cells
    collect_cells(cells, name, expected, intake, salvaged)
    if work_lines(intake.cells[before:], ctx.notebooks.given.get(name, frozenset()), MIN_COPY_LINES) >= MIN_COPY_LINES:
        event = twin_event(content, _what(found), ctx)
        if event:
            intake.flag(event)


def _what(found: Found) -> str:
    return f"{found.name}.ipynb" if found.file == f"{found.name}.ipynb" else shown(found.file)


def _readable(found: Found, taken: Taken, ctx: Context, intake: Intake) -> bool:
    """Whether the notebook's bytes are there to grade; why not, as damage, when they are not."""
    what = _what(found)
    if isinstance(taken.error, LinkRefused):
        event = link_event(taken.error.link, what, ctx)
        intake.flag(event)
        return not event.withholds
    if taken.error is not None:
        intake.damage(f"{what} could not be read ({_reason(taken.error)}); it was not graded. Submit the notebook "
                      "file itself.")
        return False
    event = copy_event(taken.st, what, ctx)
    if event:
        intake.flag(event)
    return not (event and event.withholds)


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    return str(exc)

