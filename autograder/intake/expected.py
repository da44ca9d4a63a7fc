"""The course's side of intake: which notebooks an assignment has and which cells must stay unchanged.

Locked cells are compared with the release the students were given. A course
without ``release/`` is compared with ``source/`` stripped the way nbgrader's
``generate_assignment`` strips it (hidden-test regions removed), so honest
students are never accused of editing cells they were never shown.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from ..assignment import NOTEBOOKS
from ..course.notebooks import CourseError, read_notebook, strip_hidden_tests
from ..course.settings import init_command
from .cells import cells_of, normalise
from .model import Intake
from .parse import digest_of


@dataclass(frozen=True)
class TestCell:
    grade_id: str
    text: str            # what the student should see (release version)
    meta: tuple          # (grade, solution, locked, points)


@dataclass(frozen=True)
class CourseNotebooks:
    names: tuple[str, ...]                           # the assignment's notebooks, without .ipynb
    expected: dict[str, dict[str, TestCell]]         # notebook -> grade_id -> cell to keep
    source_digests: dict[str, str]                   # digest of a source notebook's content -> its name
    release_digests: frozenset                       # digests of the release notebooks' content
    given: dict[str, frozenset]                      # notebook -> its code cells as handed out (normalised)
    instructor_files: frozenset                      # (st_dev, st_ino) of source/ and release/ notebooks
    release_missing: bool


def course_notebooks(course: Path, assignment: str) -> CourseNotebooks:
    """The assignment's notebooks (cached while the files are unchanged); CourseError if there are none."""
    src, rel = Path(course) / "source" / assignment, Path(course) / "release" / assignment
    paths = sorted(src.glob("*.ipynb")) + sorted(rel.glob("*.ipynb"))
    if not any(p.parent == src for p in paths):
        raise CourseError(f"the course has no source notebooks in {src}: nothing to grade against. "
                          f"Check --course and --assignment, or add this chapter's source/ and release/ "
                          f"with {init_command(Path(course).resolve(), merge=True)}.")
    key = tuple((str(p), st.st_mtime_ns, st.st_size) for p, st in ((p, p.stat()) for p in paths))
    return _load(src, rel, key)


@functools.lru_cache(maxsize=8)
def _load(src: Path, rel: Path, key: tuple) -> CourseNotebooks:
    names = tuple(sorted(p.stem for p in src.glob("*.ipynb")))
    release_missing = not rel.is_dir()
    expected = {n: expected_cells(src / f"{n}.ipynb", None if release_missing else rel / f"{n}.ipynb")
                for n in names}
    digests = {d: n for n in names if (d := _digest(src / f"{n}.ipynb"))}
    released = frozenset(d for p in rel.glob("*.ipynb") if (d := _digest(p)))
    given = {n: _given(src / f"{n}.ipynb", None if release_missing else rel / f"{n}.ipynb", expected[n])
             for n in names}
    inodes = frozenset((st.st_dev, st.st_ino) for st in (os.stat(p) for p, *_ in key))
    return CourseNotebooks(names, expected, digests, released, given, inodes, release_missing)


def notebooks_of(view) -> CourseNotebooks:
    """The notebooks of a ``course.view.CourseView`` as intake compares with them, read once per view;
    CourseError when it has none."""
    return view.derived(_view_notebooks)


def _view_notebooks(view) -> CourseNotebooks:
    return course_notebooks(view.root, view.assignment)


def is_this_chapter(course: Path, assignment: str) -> bool:
    """Whether the assignment is the chapter the rubric grades: its source notebooks are the rubric's and
    their grade cells worth points are the rubric's grade cells (another assignment of the course is not)."""
    try:
        found = course_notebooks(Path(course), assignment)
    except (CourseError, OSError):
        return False
    if set(found.names) != set(NOTEBOOKS):
        return False
    worth = {nb: {g for g, t in found.expected[nb].items() if t.meta[0] and (t.meta[3] or 0) > 0}
             for nb in found.names}
    return all(worth[nb] == set(NOTEBOOKS[nb]) for nb in found.names)


def _given(source_nb: Path, release_nb: Path | None, expected: dict[str, TestCell]) -> frozenset:
    """The code cells a student starts from: the release's, or the source's with solutions as released."""
    if release_nb is not None and release_nb.exists():
        texts = [c.source for c in _cells(release_nb) if c.cell_type == "code"]
    else:
        texts = [strip_hidden_tests(c.source) for c in _cells(source_nb) if c.cell_type == "code"]
    return frozenset(normalise(t) for t in [*texts, *(t.text for t in expected.values())])


def _digest(path: Path) -> str | None:
    """The digest of a course notebook's content, as a submission's is taken (``parse.digest_of``)."""
    return digest_of(path.read_bytes())


def expected_cells(source_nb: Path, release_nb: Path | None) -> dict[str, TestCell]:
    """grade_id -> the locked/graded cells a submission must keep unchanged."""
    shown = None
    if release_nb is not None and release_nb.exists():
        shown = {c.nbgrader.grade_id: c.source for c in _cells(release_nb) if c.nbgrader}
    out = {}
    for cell in _cells(source_nb):
        nbg = cell.nbgrader
        if nbg and nbg.grade_id and (nbg.grade or nbg.solution or nbg.locked):
            text = shown.get(nbg.grade_id, cell.source) if shown is not None else strip_hidden_tests(cell.source)
            out[nbg.grade_id] = TestCell(nbg.grade_id, text, nbg.flags)
    return out


def _cells(path: Path):
    """The course's own notebooks, read with the same checks as a submission's; CourseError if unreadable."""
    return cells_of(read_notebook(path), path.stem, Intake())
