"""The course as one grading run sees it, read in one place: ``read_course(root, assignment)``.

A ``CourseView`` holds the course's settings (``nbgrader_config.py``), the assignment, its source and
release notebooks' grade cells and handouts (``course.notebooks``: a byte-order mark is fine), and what
the layers above derive from them once per view (``derived``: intake's notebooks). The fingerprint of
what grades is ``grading.fingerprint.fingerprint_of(view.grade_cells)``; the points check is
``grading.chapter.check_points``; the late plugin check is ``gradebook.latepenalties.check_plugin``.
The batch, ``grade_submission``, the outputs and the watch service are handed one view instead of
each reading the course again. A view is cached per course folder, assignment and the sizes and
modification times of the files it reads: a changed file is read again, an unchanged one never.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from .notebooks import grade_cells, handout
from .settings import CONFIG, Course, load_course


@dataclass(frozen=True, eq=False)
class CourseView:
    course: Course                  # the settings of nbgrader_config.py
    assignment: str

    def __reduce__(self):
        """Sent to another process (a grading process, a Dask worker) as its folder and assignment: read
        there again, once per process while its files are unchanged."""
        return read_course, (str(self.root), self.assignment)

    @property
    def root(self) -> Path:
        return self.course.root

    @property
    def course_id(self) -> str:
        return self.course.course_id

    @property
    def db_url(self) -> str:
        return self.course.db_url

    @property
    def source(self) -> Path:
        return self.root / "source" / self.assignment

    @property
    def release(self) -> Path:
        return self.root / "release" / self.assignment

    @cached_property
    def grade_cells(self) -> dict[str, dict[str, dict]]:
        """notebook -> grade_id -> {"points", "source"} of the source notebooks' grade cells."""
        return grade_cells(self.source)

    @property
    def cell_points(self) -> dict[str, float]:
        """grade_id -> the points the course gives the cell (its nbgrader points in the source notebook):
        the points every output shows (``grading.rubric.scaled``); empty without source notebooks."""
        return {g: float(c["points"]) for cells in self.grade_cells.values() for g, c in cells.items()
                if isinstance(c.get("points"), (int, float)) and not isinstance(c.get("points"), bool)}

    def handout(self, notebook: str) -> dict:
        """The notebook as handed to students (``course.notebooks.handout``), read once per view for
        every autograded notebook of the run; shared, so callers build new cells and never change it."""
        cache = self._handouts
        if notebook not in cache:
            cache[notebook] = handout(self.root, self.assignment, notebook)
        return cache[notebook]

    @cached_property
    def _handouts(self) -> dict[str, dict]:
        return {}

    def derived(self, make):
        """``make(self)``, made once per view: what a layer above derives from the course (intake's
        notebooks, ``intake.expected.notebooks_of``) is kept with the view, so it too is read once."""
        found = self._derived
        if make not in found:
            found[make] = make(self)
        return found[make]

    @cached_property
    def _derived(self) -> dict:
        return {}


def course_settings(root) -> Course:
    """``load_course(root)``, read again only when nbgrader_config.py changed."""
    root = Path(root).resolve()
    return _settings(root, _versions([root, root / CONFIG]))


def read_course(root, assignment: str) -> CourseView:
    """The view of ``assignment`` in the course at ``root``, cached while its files are unchanged."""
    root = Path(root).resolve()
    folders = (root / "source" / assignment, root / "release" / assignment)
    files = [root, root / CONFIG, *(p for folder in folders for p in sorted(folder.glob("*.ipynb")))]
    return _view(root, assignment, _versions(files))


def _versions(paths) -> tuple:
    """(path, mtime, size, inode, owner, mode) of each file; None for one that is not there: a course whose
    owner or modes changed is read (and checked, ``owner.check_course``) again."""
    found = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            found.append((str(path), None))
            continue
        found.append((str(path), st.st_mtime_ns, st.st_size, st.st_ino, st.st_uid, st.st_mode))
    return tuple(found)


@functools.lru_cache(maxsize=16)
def _settings(root: Path, versions: tuple) -> Course:
    return load_course(root)


@functools.lru_cache(maxsize=16)
def _view(root: Path, assignment: str, versions: tuple) -> CourseView:
    return CourseView(_settings(root, versions[:2]), assignment)


def forget() -> None:
    """Drop every cached view (tests)."""
    _settings.cache_clear()
    _view.cache_clear()
