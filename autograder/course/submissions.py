"""The submissions of a course: who handed in an assignment, in nbgrader's layout
(``submitted/<student>/<assignment>/``), and the entries there that are not submissions.

Only ``lstat`` and ``stat`` look at them: a FIFO or a socket in place of a folder is never opened.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from ..inert import shown


def not_a_folder(path: Path) -> str | None:
    """What ``path`` is when it is not a folder (nor a link to one), e.g. "a FIFO"; None for a folder.
    Only stat is used: a FIFO or socket is never opened."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    if stat.S_ISDIR(st.st_mode):
        return None
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.stat(path)
        except OSError:
            return "a link that points nowhere"
        return None if stat.S_ISDIR(target.st_mode) else "a link to something that is not a folder"
    return _KINDS.get(stat.S_IFMT(st.st_mode), "not a regular file or folder")


_KINDS = {stat.S_IFREG: "a plain file", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket",
          stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device"}


def stray_entries(root: Path) -> list[str]:
    """A note for each entry of submitted/ that is not a student folder (a FIFO, a file, ...): not graded."""
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    return [f"submitted/{shown(n)[1:-1]} is {odd}, not a student folder; it was not graded"
            for n in names if (odd := not_a_folder(root / n))]


def without_assignment(root: Path, assignment: str) -> list[str]:
    """A note for each student folder of submitted/ that holds no ``<assignment>`` entry (a misnamed folder,
    another assignment only): not graded, and said so rather than skipped without a word."""
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    return [f"submitted/{shown(n)[1:-1]}/ holds no {assignment}/ ({_holds(root / n)}), so {shown(n)} was not "
            f"graded: name the folder submitted/{shown(n)[1:-1]}/{assignment}/ and run grade --resume"
            for n in names if not_a_folder(root / n) is None and not os.path.lexists(root / n / assignment)]


def _holds(folder: Path, most: int = 3) -> str:
    """What a folder holds, in a few names (never more than ``most + 1`` entries are read)."""
    try:
        with os.scandir(folder) as it:
            names = sorted(entry.name for entry, _ in zip(it, range(most + 1)))
    except OSError as exc:
        return f"it cannot be read: {exc.strerror}"
    if not names:
        return "it is empty"
    listed = ", ".join(shown(n) for n in names[:most])
    return f"it holds {listed}{' and more' if len(names) > most else ''}"


def discover(course: Path, assignment: str, only: list[str] | None = None) -> list[str]:
    """Every student with an entry ``submitted/<student>/<assignment>``, whatever its kind: an entry
    that is not a folder is graded as a record for review (``run.grader.grade``), never left out."""
    root = course / "submitted"
    found = sorted(p.name for p in root.iterdir() if p.is_dir() and os.path.lexists(p / assignment)) if root.is_dir() else []
    if not found:
        raise ValueError(f"no submissions found: expected folders {root}/<student>/{assignment}/ "
                         f"(nbgrader's layout: `nbgrader collect {assignment}` in the course folder puts them "
                         "there, or copy each student's notebooks there); check --course and --assignment")
    if only:
        missing = sorted(set(only) - set(found))
        if missing:
            raise ValueError(f"no submission folder for {', '.join(missing)} under {root}/<student>/{assignment}")
        found = [s for s in found if s in only]
    return found
