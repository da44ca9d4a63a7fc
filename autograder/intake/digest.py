"""What a submission is, as one short hash: every file in its folder, by name and content.

A record carries the digest of the submission it graded, so ``grade --resume`` sees a resubmission
(``nbgrader collect --update`` replaces the notebooks and ``timestamp.txt``) and regrades it. The
folder is read as intake reads it: no link is followed (a link counts by its target's name), no
FIFO or device is opened (it counts by its kind), at most ``MAX_LISTING`` names and
``HARD_LIMIT_BYTES`` per file are read, in chunks. Nothing here raises: an unreadable entry
counts by its error, so a folder that changes in any way gives another digest.
"""
from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from .files import HARD_LIMIT_BYTES, MAX_LISTING, NOFOLLOW, kind

_CHUNK = 1 << 20


def submission_digest(path: Path) -> str:
    """The digest of a submission folder (or of one notebook file and its folder's timestamp.txt)."""
    path = Path(os.path.abspath(path))
    folder, only = (path.parent, [path.name, "timestamp.txt"]) if not _is_folder(path) else (path, None)
    h = hashlib.sha256()
    try:                                    # a submission folder that is a link is not followed
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        h.update(b"folder: " + _entry_at(folder))
        return h.hexdigest()[:16]
    try:
        for name in sorted(only if only is not None else _names(fd)):
            h.update(os.fsencode(name) + b"\0" + _entry(fd, name) + b"\0")
    finally:
        os.close(fd)
    return h.hexdigest()[:16]


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _entry_at(path: Path) -> bytes:
    """What stands at ``path`` when it cannot be opened as a folder (a link, a FIFO, nothing)."""
    try:
        fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        return f"unreadable: {exc.strerror}".encode()
    try:
        return _entry(fd, path.name)
    finally:
        os.close(fd)


def _names(fd: int) -> list[str]:
    names = []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                names.append(entry.name)
                if len(names) >= MAX_LISTING:
                    break
    except OSError as exc:
        names.append(f"\0unlistable: {exc.strerror}")
    return names


def _entry(dir_fd: int, name: str) -> bytes:
    """One entry's part of the digest: a file's content hash, a link's target, another kind's name."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            return b"link:" + os.fsencode(os.readlink(name, dir_fd=dir_fd))
        if not stat.S_ISREG(st.st_mode):
            return kind(st.st_mode).encode()
        return b"file:" + _content_hash(dir_fd, name)
    except OSError as exc:
        return f"unreadable: {exc.strerror}".encode()


def _content_hash(dir_fd: int, name: str) -> bytes:
    fd = os.open(name, NOFOLLOW, dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b"changed kind"
        h, total = hashlib.sha256(), 0
        while total <= HARD_LIMIT_BYTES and (chunk := os.read(fd, _CHUNK)):
            h.update(chunk)
            total += len(chunk)
        return h.hexdigest().encode()
    finally:
        os.close(fd)
