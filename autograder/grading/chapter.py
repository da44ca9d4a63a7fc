"""Whether an assignment of the course is this chapter, and whether its points agree with the rubric:
checked before grading, each with one message that says what to run, in the install at hand."""
from __future__ import annotations

import shlex
import sys
from pathlib import Path

from ..assignment import NOTEBOOKS
from ..course.view import read_course


def check_points(view) -> None:
    """Stop before grading when the course's source notebooks and the rubric do not match (``view``: the
    course as the run read it, ``course.view``): a cell missing, or worth points no check grades. A cell's
    points are the course's to set: its checks share them (``rubric.scaled``)."""
    from .fingerprint import points_disagreements      # the rubric and its checks: loaded when needed
    problems = points_disagreements(view.source) if view.source.is_dir() else []
    if problems:
        raise ValueError(f"the source notebooks and the rubric do not match ({'; '.join(problems)}): "
                         f"{_points_fix(view.root, view.assignment)}")


def _points_fix(course: Path, assignment: str) -> str:
    """What to run, with the commands this install has: the repository's Makefile, or the package's CLI."""
    makefile = course / "Makefile"
    if (course / "autograder" / "grading" / "rubric.py").is_file() and makefile.is_file() and "release:" in makefile.read_text():
        return ("put the cells named above back in source/ (or give autograder/grading/rubric.py checks for "
                "them), then run `make release`")
    release = shlex.join([sys.executable, "-m", "autograder", "release", "--course", str(course)])
    return (f"put the cells named above back in {course / 'source' / assignment} (the chapter as this package "
            f"ships it: `{sys.executable} -m autograder init DIR`), then run `{release}`")


def check_release_points(course: Path, assignment: str) -> None:
    """Stop before a release of this chapter whose grade cells do not match the rubric's: students would be
    handed points that ``grade`` then refuses to grade by (another assignment of the course is released as is)."""
    try:
        check_chapter(course, assignment)
    except ValueError:
        return
    check_points(read_course(course, assignment))


def check_chapter(course: Path, assignment: str) -> None:
    """Stop when ``assignment`` is another assignment of the course: this grader grades this chapter only."""
    source = course / "source" / assignment
    found = sorted(p.stem for p in source.glob("*.ipynb")) if source.is_dir() else []
    ours = {nb.lower() for nb in NOTEBOOKS}
    if found and not ours & {nb.lower() for nb in found}:
        shown_found = ", ".join(f"{nb}.ipynb" for nb in found[:5]) + (" ..." if len(found) > 5 else "")
        raise ValueError(f"{assignment} is not this chapter: its source/{assignment}/ holds {shown_found}, "
                         f"and this grader grades only the attention chapter ({', '.join(NOTEBOOKS)}): use "
                         f"`nbgrader autograde {assignment}` for it")
