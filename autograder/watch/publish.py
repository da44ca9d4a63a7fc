"""Pages go exactly where ``nbgrader release_feedback`` puts them, so ``fetch_feedback`` finds them.

``<exchange root>/<course id>/feedback/<notebook_hash(secret, notebook id)>.html``: nbgrader's own
hash of the submission's secret and the notebook's name, which only the student holding that
submission's secret (in their exchange cache) can compute. Each page is written to a temporary
file in the folder, made readable by everyone (0644, as release_feedback's copies are), synced and
renamed over the old one: a reader never sees half a page.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from nbgrader.utils import notebook_hash     # seconds to import: paid when the service starts, not on a first page

from ..durable import replace_atomically

FOLDER_MODE = stat.S_IRWXU | stat.S_IXGRP | stat.S_IXOTH       # 0711, as release_feedback makes it
PAGE_MODE = 0o644


def page_file(secret: str, notebook_id: str) -> str:
    """The file name nbgrader gives the feedback page of ``notebook_id`` for the submission ``secret``."""
    return f"{notebook_hash(secret=secret, notebook_id=notebook_id)}.html"


def ensure_folder(folder: Path) -> None:
    """The exchange's feedback folder, made as release_feedback makes it when it is missing."""
    if not folder.parent.is_dir():
        raise ValueError(f"{folder.parent} does not exist: the exchange holds no course there yet; run "
                         "`nbgrader release_assignment` first, or check c.Exchange.root and "
                         "c.CourseDirectory.course_id")
    try:
        folder.mkdir(mode=FOLDER_MODE)
        os.chmod(folder, FOLDER_MODE)                # mkdir's mode passes through the umask
    except FileExistsError:
        pass
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{folder} is not writable by this user: run watch as the instructor who runs "
                         "release_feedback (the folder's owner)")


def publish(folder: Path, pages: dict[str, str], mark: bytes) -> list[str]:
    """Write ``pages`` (file name -> HTML) into ``folder``, each atomically and readable by all, except over
    a page without ``mark`` (one ``release_feedback`` put there: the graded feedback is never replaced by
    ours); returns the names kept. Raises OSError."""
    kept = []
    for name, html in pages.items():
        if _foreign(folder / name, mark):
            kept.append(name)
            continue
        write_atomic(folder / name, html.encode("utf-8", "backslashreplace"), PAGE_MODE)
    return kept


def _foreign(path: Path, mark: bytes) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    except OSError:
        return True                                  # a link or worse in our place: leave it to the instructor
    try:
        return not stat.S_ISREG(os.fstat(fd).st_mode) or mark not in os.read(fd, 1 << 16)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes, mode: int = 0o600) -> None:
    """``data`` at ``path`` whole or not at all (the grader's one atomic writer); an OSError is raised as is."""
    replace_atomically(path, data, mode)
