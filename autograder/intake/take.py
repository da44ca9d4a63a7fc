"""What grading takes from a submission folder, and reading it: the one path intake and the digest share.

Only the files the grader grades are read (the assignment's notebooks, or the renamed copy ``names.find``
takes for one), each through ``files.read_regular`` and all of them charged to one ``files.Budget``:
nothing else in the folder is opened, however many names or bytes it holds. A folder with more names
than are looked at gets a note, and the notebooks are still looked for by name.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..inert import shown
from .files import HARD_LIMIT_BYTES, MAX_LISTING, Budget, LinkRefused, listing, open_folder, read_regular
from .model import Refused
from .names import Found, find, notebook_for


@dataclass
class Taken:
    """One notebook as read: its bytes and ``fstat``, or why it was not read (``LinkRefused``, ``Refused``,
    ``OSError``). ``release()`` hands the bytes over once, so no one else keeps them alive."""
    raw: bytes | None = None
    st: os.stat_result | None = None
    error: Exception | None = None

    def release(self) -> bytes | None:
        raw, self.raw = self.raw, None
        return raw


def levels(folder: Path, assignment: str | None) -> int:
    """How many trailing folders belong to the student: ``<student>/<assignment>`` in nbgrader's layout."""
    return 2 if folder.name == assignment and folder.parent.parent.name == "submitted" else 1


def open_submission(path: Path, assignment: str | None) -> tuple[int, Path, bool]:
    """(a descriptor of the submission's folder, that folder, whether ``path`` is one notebook file);
    raises LinkRefused, Refused or OSError."""
    path = Path(os.path.abspath(path))
    single = path.name.lower().endswith(".ipynb")
    folder = path.parent if single else path
    return open_folder(folder, levels(folder, assignment)), folder, single


def names_in(fd: int, names) -> tuple[list[str], str | None]:
    """The folder's names as ``names.find`` needs them (its first MAX_LISTING, plus each expected notebook
    that is there), and a note when it holds more than are looked at."""
    files = listing(fd)
    note = None
    if len(files) >= MAX_LISTING:
        note = (f"The submission folder holds more than {MAX_LISTING:,} names; only the assignment's notebooks "
                "were looked for (renamed copies of them may have been missed). Submit the notebooks alone.")
    return files + [f"{n}.ipynb" for n in names if _exists(fd, f"{n}.ipynb")], note


def wanted(path: Path, single: bool, files: list[str], names) -> tuple[list[Found], str | None]:
    """Which file stands for each notebook graded, and a problem when ``path`` is a notebook none stands for."""
    names = tuple(names)
    if not single:
        return [find(name, files, names) for name in names], None
    match = notebook_for(path.name, names)
    if match is None:
        return [], f"{shown(path.name)} is not one of the assignment's notebooks ({', '.join(names)})."
    note = None if path.name == f"{match}.ipynb" else f"{shown(path.name)} was graded as {match}.ipynb."
    return [Found(match, path.name, note=note)], None


def take(fd: int, folder: Path, found: Found, budget: Budget, cap: int = HARD_LIMIT_BYTES) -> Taken:
    """The bytes of the file that stands for ``found`` (none when there is no such file); one over ``cap``
    bytes is refused before it is read."""
    if found.file is None:
        return Taken()
    try:
        raw, st = read_regular(fd, folder, found.file, cap, budget=budget)
    except (LinkRefused, Refused, OSError) as exc:
        return Taken(error=exc)
    return Taken(raw, st)


def _exists(fd: int, name: str) -> bool:
    """Whether ``name`` is in the folder, link or not (a huge folder's listing may not reach it)."""
    try:
        os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return False
    return True
