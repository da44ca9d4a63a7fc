"""What a submission is, as one short hash: the files the grader grades, by name and content.

A record carries the digest of the submission it graded, so ``grade --resume``, ``watch`` and the nbgrader
door see a resubmission (``nbgrader collect --update`` replaces the notebooks and ``timestamp.txt``) and
regrade it. Intake builds the digest from the very bytes it grades (``SubmissionHash``, fed as it reads);
``submission_digest`` reads a folder the same way (``take``: the same files, the same caps, one
``files.Budget``) without grading it, so the two agree. Nothing but the graded notebooks and
``timestamp.txt`` is read: a folder of 10,000 huge or sparse files costs what its notebooks cost.
Nothing here raises: a file that could not be read counts by why, so a change of any kind gives
another digest.
"""
from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from .files import NOFOLLOW, Budget, kind
from .model import Refused
from .names import Found
from .take import Taken, names_in, open_submission, take, wanted

TIMESTAMP = "timestamp.txt"
_TIMESTAMP_BYTES = 256


class SubmissionHash:
    """The digest of what grading took from a submission, fed one notebook at a time as it is read."""

    def __init__(self):
        self._h = hashlib.sha256()

    def part(self, found: Found, taken: Taken) -> None:
        what = (b"file:" + hashlib.sha256(taken.raw).digest() if taken.raw is not None
                else b"unread:" + why_bytes(taken.error) if taken.error is not None else b"missing")
        self._h.update(found.name.encode("utf-8", "surrogateescape") + b"\0" +
                       os.fsencode(found.file or "") + b"\0" + what + b"\n")

    def whole(self, why: str) -> None:
        """The submission could not be taken at all (its folder is a link, or unreadable)."""
        self._h.update(b"folder:" + why.encode("utf-8", "surrogateescape") + b"\n")

    def timestamp(self, fd: int) -> None:
        self._h.update(b"timestamp:" + _small(fd, TIMESTAMP) + b"\n")

    def hexdigest(self) -> str:
        return self._h.hexdigest()[:16]


def submission_digest(path: Path, names, assignment: str | None = None, budget: Budget | None = None) -> str:
    """The digest of a submission folder (or of one notebook file and its folder's timestamp.txt) as
    intake of the notebooks ``names`` of ``assignment`` would read it."""
    h, budget = SubmissionHash(), budget or Budget()
    try:
        fd, folder, single = open_submission(Path(path), assignment)
    except (Refused, OSError) as exc:          # a link or something else where the folder should be
        h.whole(why_bytes(exc).decode("utf-8", "surrogateescape"))
        return h.hexdigest()
    try:
        try:
            files, _ = names_in(fd, names)
        except OSError as exc:
            h.whole(f"unlistable: {exc.strerror}")
            return h.hexdigest()
        for found in wanted(Path(os.path.abspath(path)), single, files, names)[0]:
            taken = take(fd, folder, found, budget)
            h.part(found, taken)
            taken.release()
        h.timestamp(fd)
    finally:
        os.close(fd)
    return h.hexdigest()


def why_bytes(exc: BaseException | None) -> bytes:
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return f"{type(exc).__name__}: {text}".encode("utf-8", "surrogateescape")


def _small(fd: int, name: str) -> bytes:
    """A small file's bytes (no link followed, nothing but a regular file opened), or what it is."""
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):
            return kind(st.st_mode).encode()
        sfd = os.open(name, NOFOLLOW, dir_fd=fd)
    except OSError as exc:
        return f"unreadable: {exc.strerror}".encode()
    try:
        return os.read(sfd, _TIMESTAMP_BYTES + 1) if stat.S_ISREG(os.fstat(sfd).st_mode) else b"changed kind"
    except OSError as exc:
        return f"unreadable: {exc.strerror}".encode()
    finally:
        os.close(sfd)
