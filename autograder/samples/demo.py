"""`make demo`: grade the bundled sample class with the hardened grader and show the results."""
from __future__ import annotations

import shutil
from pathlib import Path

from ..course.create import init_course
from ..course.settings import DEFAULT_ASSIGNMENT
from ..run.batch import grade_batch
from ..textreport import outputs_lines, summary_table
from .sample_class import lay_out, makeup

MARKER = ".attention-course-demo"


class DemoError(ValueError):
    """The demo folder exists and holds something else."""


def prepare(workdir: Path, assignment: str = DEFAULT_ASSIGNMENT) -> Path:
    """A fresh demo course in ``workdir``: the packaged course, as `init` lays it out, plus the sample class."""
    workdir = Path(workdir).resolve()
    _clear_previous(workdir)
    init_course(workdir, assignment=assignment)
    (workdir / MARKER).write_text("made by `python -m autograder demo`; replaced by its next run\n")
    lay_out(workdir, assignment)
    return workdir


def _clear_previous(workdir: Path) -> None:
    """Remove an earlier demo; never a folder the demo did not make."""
    if not workdir.exists() or (workdir.is_dir() and not any(workdir.iterdir())):
        return
    if (workdir / MARKER).is_file() or (workdir / "submitted" / "correct-1").is_dir():   # also demos before the marker
        shutil.rmtree(workdir)
        return
    raise DemoError(f"{workdir} exists and was not made by the demo: choose another folder with --dir, "
                    "or remove it")


def run_demo(workdir: Path | None = None, workers: int | None = None) -> Path:
    """Grade the sample class in ``workdir`` (default ``./demo``) and print the summary table."""
    demo = prepare(Path(workdir) if workdir else Path.cwd() / "demo")
    print(f"the sample class in {demo / 'submitted'}: {makeup()}")        # what the summary then counts
    result = grade_batch(course=demo, out=demo / "grading", workers=workers)
    print(summary_table(result.records, result.late))
    print(outputs_lines(result.out))
    return result.out / "report.html"
