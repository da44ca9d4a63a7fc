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

from ..course.settings import DEFAULT_ASSIGNMENT
from ..inert import shown
from .cells import cells_of
from .compare import MIN_COPY_LINES, collect_cells, work_lines
from .expected import course_notebooks
from .files import MAX_NOTEBOOK_BYTES, LinkRefused, listing, open_folder, read_regular
from .integrity import Context, copy_event, link_event, secret_event, source_event, twin_event
from .model import Intake, Refused
from .names import Found, find, notebook_for
from .parse import digest, read_notebook
from .secret import secret_in


def intake_submission(path: Path, course: Path, assignment: str = DEFAULT_ASSIGNMENT,
                      student_id: str | None = None, snapshot: str | None = None, *, notebooks=None) -> Intake:
    """The student's code cells and the submission's damage; raises only CourseError (the course's fault).
    ``snapshot``: a batch's token; its submissions are compared with the class as this process first read
    it for that batch (``integrity.class_index``), instead of reading the class again for each. ``notebooks``:
    the assignment's notebooks as the caller read them (``course.view``); by default they are read here."""
    notebooks = notebooks if notebooks is not None else course_notebooks(Path(course), assignment)
    ctx = Context(Path(course), assignment, student_id, notebooks, snapshot)
    intake = Intake()
    path = Path(os.path.abspath(path))
    single = path.name.lower().endswith(".ipynb")
    folder = path.parent if single else path
    try:
        fd = open_folder(folder, _levels(folder, assignment))
    except LinkRefused as exc:
        intake.damage(*link_event(exc.link, "the submission folder " + shown(exc.link.name), ctx), suspicion=True)
        return intake
    except (Refused, OSError) as exc:
        intake.damage(f"The submission folder could not be opened ({_reason(exc)}); nothing was graded.")
        return intake
    try:
        if not single and _levels(folder, assignment) == 2:        # nbgrader's layout: a secret decides delivery
            secret = secret_in(fd)
            event = secret_event(fd, secret, ctx)
            if event:
                intake.damage(*event, suspicion=True)
            elif isinstance(secret, bytes):
                intake.secret = secret
        files = listing(fd) + [f"{n}.ipynb" for n in ctx.notebooks.names if _exists(fd, f"{n}.ipynb")]
        for found in _wanted(path, single, files, ctx, intake):
            _guarded(fd, folder, found, ctx, intake)
    except OSError as exc:
        intake.damage(f"The submission folder could not be listed ({_reason(exc)}); nothing was graded.")
    finally:
        os.close(fd)
    return intake


def _exists(fd: int, name: str) -> bool:
    """Whether ``name`` is in the folder, link or not (a huge folder's listing may not reach it)."""
    try:
        os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return False
    return True


def _levels(folder: Path, assignment: str) -> int:
    """How many trailing folders belong to the student: ``<student>/<assignment>`` in nbgrader's layout."""
    return 2 if folder.name == assignment and folder.parent.parent.name == "submitted" else 1


def _wanted(path: Path, single: bool, files: list[str], ctx: Context, intake: Intake) -> list[Found]:
    names = ctx.notebooks.names
    if not single:
        return [find(name, files, names) for name in names]
    match = notebook_for(path.name, names)
    if match is None:
        intake.damage(f"{shown(path.name)} is not one of the assignment's notebooks ({', '.join(names)}).")
        return []
    note = None if path.name == f"{match}.ipynb" else f"{shown(path.name)} was graded as {match}.ipynb."
    return [Found(match, path.name, note=note)]


def _guarded(fd: int, folder: Path, found: Found, ctx: Context, intake: Intake) -> None:
    """One notebook's intake; any unexpected error damages this notebook only (its problems are its own)."""
    before = len(intake.problems)
    try:
        _notebook(fd, folder, found, ctx, intake)
    except Exception as exc:  # noqa: BLE001 - a surprise in one notebook must not stop the others
        detail = traceback.format_exception_only(type(exc), exc)[-1].strip()[:200]
        intake.damage(f"{found.name}.ipynb could not be read by the grader ({shown(detail, 200)}); it was not "
                      "graded and an instructor must look at it.")
    intake.owner.update(dict.fromkeys(range(before, len(intake.problems)), found.name))


def _notebook(fd: int, folder: Path, found: Found, ctx: Context, intake: Intake) -> None:
    name = found.name
    if found.problem:
        intake.damage(found.problem)
        return
    if found.note:
        intake.note(found.note)
    raw = _read(fd, folder, found, ctx, intake)
    if raw is None:
        return
    intake.files[name] = found.file
    if len(raw) > MAX_NOTEBOOK_BYTES:
        intake.damage(f"{name}.ipynb is {len(raw) / 1e6:.0f} MB (limit {MAX_NOTEBOOK_BYTES >> 20} MB), "
                      "mostly outputs; the outputs were ignored and the code graded.")
    nb, salvaged = read_notebook(raw, name, intake)
    if nb is None:
        return
    content = digest(nb)                        # what integrity reads is what is graded: the decoded notebook
    copied = source_event(content, _what(found), ctx)
    if copied:
        intake.damage(copied, suspicion=True)
        return
    expected, before = ctx.notebooks.expected.get(name, {}), len(intake.cells)
    cells = cells_of(nb, name, intake)
    intake.layout[name] = cells
    collect_cells(cells, name, expected, intake, salvaged)
    if work_lines(intake.cells[before:], ctx.notebooks.given.get(name, frozenset())) >= MIN_COPY_LINES:
        event = twin_event(content, _what(found), ctx)
        if event:
            intake.damage(*event, suspicion=True)


def _what(found: Found) -> str:
    return f"{found.name}.ipynb" if found.file == f"{found.name}.ipynb" else shown(found.file)


def _read(fd: int, folder: Path, found: Found, ctx: Context, intake: Intake) -> bytes | None:
    what = _what(found)
    try:
        raw, st = read_regular(fd, folder, found.file)
    except LinkRefused as exc:
        intake.damage(*link_event(exc.link, what, ctx), suspicion=True)
        return None
    except (Refused, OSError) as exc:
        intake.damage(f"{what} could not be read ({_reason(exc)}); it was not graded. Submit the notebook "
                      "file itself.")
        return None
    event = copy_event(st, what, ctx)
    if event:
        intake.damage(event[0], event[2], suspicion=True)
        return None if event[1] else raw
    return raw


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    return str(exc)

