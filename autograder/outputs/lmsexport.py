"""``python -m autograder export``: the assignment's totals from the gradebook into the LMS's own export."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..course.settings import choose_assignment, resolve_db_url
from ..course.view import course_settings
from ..gradebook.totals import assignment_totals
from ..records import OutputError, atomic_write
from .lms import LmsFormatError, Merged, merge_canvas, merge_moodle

MAX_EXPORT = 64 * 1024 * 1024        # an LMS export of a very large course is a few MiB


@dataclass(frozen=True)
class LmsExport:
    """Where the file for the LMS's import was written, and what it says."""
    path: Path
    merged: Merged


def export_grades(*, course=".", assignment: str | None = None, canvas=None, moodle=None, column: str | None = None,
                  match: str | None = None, out=None, gradebook_url: str | None = None) -> LmsExport:
    """Merge the totals of ``assignment`` (as ``nbgrader export`` has them) into the Canvas or Moodle gradebook
    export (``canvas`` or ``moodle``, a path) and write ``OUT/<lms>-<assignment>.csv`` (``out`` default
    ``COURSE/grading``, beside the run's outputs). ``column``: the LMS's column for it (default the
    assignment's name); ``match``: login, sis or email (default login for Canvas, email for Moodle)."""
    if (canvas is None) == (moodle is None):
        raise ValueError("give one LMS export: --canvas FILE or --moodle FILE")
    settings = course_settings(course)
    assignment = choose_assignment(settings.root, assignment)
    source, lms = (Path(canvas), "canvas") if canvas is not None else (Path(moodle), "moodle")
    text = _read_export(source, lms)
    db_url = resolve_db_url(gradebook_url, Path.cwd()) if gradebook_url else settings.db_url
    totals = assignment_totals(db_url, settings.course_id, assignment)
    merge = merge_canvas if lms == "canvas" else merge_moodle
    options = {"column": column or assignment, **({"match": match} if match else {})}
    merged = merge(text, totals, **options)
    if not merged.filled:
        raise LmsFormatError(f"no row of {source} could be matched to a student of the gradebook, so nothing was "
                             f"written: {' '.join(merged.notes)}; check --match")
    path = (Path(out).resolve() if out else settings.root / "grading") / f"{lms}-{assignment}.csv"
    bom = "\ufeff" if text.startswith("\ufeff") else ""       # as the LMS (or the spreadsheet) wrote it
    try:
        atomic_write(path, bom + merged.text)
    except OSError as exc:
        raise OutputError(f"cannot write {path} ({exc.strerror or exc}); give another folder with --out") from None
    return LmsExport(path, merged)


def _read_export(path: Path, lms: str) -> str:
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_EXPORT + 1)
    except OSError as exc:
        raise ValueError(f"cannot read the {lms.capitalize()} export {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_EXPORT:
        raise ValueError(f"{path} is over {MAX_EXPORT >> 20} MiB, larger than any {lms.capitalize()} gradebook "
                         "export: is it the right file?")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text (byte {exc.start}): export it again from "
                         f"{lms.capitalize()}, or save it from the spreadsheet as CSV UTF-8") from None
