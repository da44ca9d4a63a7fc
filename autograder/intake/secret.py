"""A submission's ``submission_secret.txt``, read as hostile input, by every part that needs it.

``nbgrader submit`` writes a fresh random secret (hex) into each submission; ``release_feedback`` names
each released page by nbgrader's hash of that secret and the notebook's name, and ``fetch_feedback``
finds a page by recomputing the hash from the student's own copy. So the secret decides who receives
a page: one read here, used by intake (a secret two submissions share, or a link, is flagged), by
the outputs (only a submission with a usable secret of its own gets pages in nbgrader's feedback
layout) and by ``watch``. The file is opened without following links, must be a regular file of at
most ``MAX_SECRET_BYTES`` holding hex exactly as nbgrader writes it (no newline: nbgrader hashes the
file's text as it is).
"""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from ..inert import shown
from .files import NOFOLLOW, kind, open_folder
from .model import Refused

SECRET = "submission_secret.txt"
MAX_SECRET_BYTES = 512
_HEX = re.compile(rb"[0-9a-f]{16,256}")


NONE = f"it has no {SECRET}"      # a submission collected without nbgrader's exchange


def secret_in(fd: int) -> bytes | str:
    """The secret's bytes in the folder open as ``fd``, or what is wrong with it (``NONE``, "its ... is ...")."""
    try:
        st = os.stat(SECRET, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return NONE
    except OSError as exc:
        return f"its {SECRET} could not be opened ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return f"its {SECRET} could not be opened (it is a link)"
    if not stat.S_ISREG(st.st_mode):
        return f"its {SECRET} is {kind(st.st_mode)}"
    try:
        sfd = os.open(SECRET, NOFOLLOW, dir_fd=fd)
    except OSError as exc:
        return f"its {SECRET} could not be opened ({exc.strerror})"
    try:
        if not stat.S_ISREG(os.fstat(sfd).st_mode):
            return f"its {SECRET} changed while it was opened"
        data = os.read(sfd, MAX_SECRET_BYTES + 1)
    except OSError as exc:
        return f"its {SECRET} could not be read ({exc.strerror})"
    finally:
        os.close(sfd)
    if not _HEX.fullmatch(data):
        return f"its {SECRET} does not hold a secret as nbgrader writes one ({len(data)} bytes, not hex)"
    return data


def is_link(fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(SECRET, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def submission_secret(folder: Path) -> bytes | str:
    """``secret_in`` for ``submitted/<student>/<assignment>`` (neither folder followed if it is a link)."""
    try:
        fd = open_folder(folder, 2)
    except (Refused, OSError) as exc:
        return f"its folder could not be opened ({exc.strerror if isinstance(exc, OSError) else exc})"
    try:
        return secret_in(fd)
    finally:
        os.close(fd)


def class_secrets(submitted: Path, assignment: str, students) -> dict[str, bytes | str]:
    """Each student's ``submission_secret`` for ``assignment``."""
    return {s: submission_secret(Path(submitted) / s / assignment) for s in students}


def sharers(secrets: dict[str, bytes | str]) -> dict[str, list[str]]:
    """student -> the other students whose submission holds the same secret (only those who share one)."""
    by_secret: dict[bytes, list[str]] = {}
    for student, secret in secrets.items():
        if isinstance(secret, bytes):
            by_secret.setdefault(secret, []).append(student)
    return {s: sorted(o for o in group if o != s) for group in by_secret.values() if len(group) > 1 for s in group}


def without_exchange(secrets: dict[str, bytes | str]) -> bool:
    """Whether the class was collected without nbgrader's exchange (an LMS download, ``nbgrader
    zip_collect``): no submission has a secret at all. Its feedback then goes in nbgrader's layout without
    one, as ``generate_feedback`` writes it, for the instructor to hand out."""
    return bool(secrets) and all(s == NONE for s in secrets.values())


def deliverable(secrets: dict[str, bytes | str]) -> dict[str, bytes | str]:
    """Each student's secret when nbgrader can deliver their feedback to them alone, else why not."""
    shared = sharers(secrets)
    return {s: (f"its {SECRET} is the same as that of {', '.join(shown(o) for o in shared[s][:3])} (nbgrader gives "
                "every submission its own), so its feedback would reach them too; refused for all of them"
                if s in shared else secret) for s, secret in secrets.items()}
