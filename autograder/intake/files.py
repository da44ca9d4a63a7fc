"""Open a submission's folder and notebooks without following links, blocking, or reading without bound.

Every name inside a submission is looked at with ``lstat`` relative to a folder
descriptor, opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked again with
``fstat`` on the descriptor: only folders and regular files are accepted, so
a link, a FIFO, a socket or a device is refused with a message, never
followed, waited on or read. Reads stop at a size cap.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..inert import shown
from .model import Refused

MAX_NOTEBOOK_BYTES = 50 << 20        # larger notebooks are flagged (outputs are not needed)
HARD_LIMIT_BYTES = 256 << 20         # larger ones are not read at all
MAX_LISTING = 10_000                 # names looked at in a submission folder
_CHUNK = 1 << 20
NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


@dataclass(frozen=True)
class Link:
    """A link found where a file or folder was expected."""
    folder: Path
    name: str
    target: str

    @property
    def points_to(self) -> Path:
        return Path(os.path.realpath(os.path.join(self.folder, self.target)))


class LinkRefused(Refused):
    def __init__(self, link: Link):
        super().__init__(f"{shown(link.name)} is a link (to {shown(link.target)}); links are not followed")
        self.link = link


def kind(mode: int) -> str:
    for test, word in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a link"), (stat.S_ISREG, "a file")):
        if test(mode):
            return word
    return "not a file"


def _lstat(dir_fd: int, folder: Path, name: str, want) -> os.stat_result:
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        raise LinkRefused(Link(folder, name, os.readlink(name, dir_fd=dir_fd)))
    if not want(st.st_mode):
        raise Refused(f"{shown(name)} is {kind(st.st_mode)}")
    return st


def _open_checked(dir_fd: int, name: str, flags: int, before: os.stat_result, want) -> int:
    fd = os.open(name, flags, dir_fd=dir_fd)
    after = os.fstat(fd)
    if not want(after.st_mode) or (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise Refused(f"{shown(name)} changed while it was being opened")
    return fd


def open_folder(path: Path, levels: int) -> int:
    """A descriptor for ``path``; its last ``levels`` components are not followed if they are links."""
    path = Path(os.path.abspath(path))
    base = path
    for _ in range(levels):
        base = base.parent
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    folder = base
    try:
        for name in path.parts[len(base.parts):]:
            before = _lstat(fd, folder, name, stat.S_ISDIR)
            child = _open_checked(fd, name, NOFOLLOW | os.O_DIRECTORY, before, stat.S_ISDIR)
            os.close(fd)
            fd, folder = child, folder / name
    except BaseException:
        os.close(fd)
        raise
    return fd


def listing(dir_fd: int) -> list[str]:
    """Names in the folder (at most MAX_LISTING), as ``os.listdir`` spells them."""
    names = []
    with os.scandir(dir_fd) as entries:
        for entry in entries:
            names.append(entry.name)
            if len(names) >= MAX_LISTING:
                break
    return sorted(names)


def read_regular(dir_fd: int, folder: Path, name: str, cap: int = HARD_LIMIT_BYTES) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file ``name`` (at most ``cap``) and its ``fstat``; raises Refused."""
    before = _lstat(dir_fd, folder, name, stat.S_ISREG)
    if before.st_size > cap:
        raise Refused(f"{shown(name)} is {before.st_size / 1e6:.0f} MB, too large to read; "
                      "clear its outputs and resubmit")
    fd = _open_checked(dir_fd, name, NOFOLLOW, before, stat.S_ISREG)
    try:
        chunks, total = [], 0
        while total <= cap:
            chunk = os.read(fd, min(_CHUNK, cap + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > cap:
            raise Refused(f"{shown(name)} grew past {cap >> 20} MB while it was read")
        return b"".join(chunks), os.fstat(fd)
    finally:
        os.close(fd)
