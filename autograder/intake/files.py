"""Open a submission's folder and notebooks without following links, blocking, or reading without bound.

Every name inside a submission is looked at with ``lstat`` relative to a folder
descriptor, opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked again with
``fstat`` on the descriptor: only folders and regular files are accepted, so
a link, a FIFO, a socket or a device is refused with a message, never
followed, waited on or read. Reads stop at a size cap.

Every read of a submission's bytes outside the sandbox is charged to a ``Budget`` (one per submission)
in the bytes actually read and the time spent, never in what a file claims to hold: a file that claims
more than the cap is not read at all, a sparse file (holes: bytes the student never wrote, which cost
no disk and read as zeros) is refused before its first byte, and a read that runs past the budget's
bytes or seconds stops with a note for the submitter.
"""
from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from ..inert import shown
from .model import Refused

MAX_NOTEBOOK_BYTES = 50 << 20        # larger notebooks are flagged (outputs are not needed)
HARD_LIMIT_BYTES = 256 << 20         # larger ones are not read at all
MAX_LISTING = 10_000                 # names looked at in a submission folder
_CHUNK = 1 << 20
READ_BYTES = HARD_LIMIT_BYTES        # all the files one submission has read, together
READ_SECONDS = 10.0                  # and the time spent reading them
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


@dataclass
class Budget:
    """What reading one submission may still cost: bytes actually read, and time (monotonic clock)."""
    bytes_left: int | None = None            # default READ_BYTES
    seconds: float | None = None             # default READ_SECONDS: time spent reading, not between reads
    spent: float = 0.0
    clock = staticmethod(time.monotonic)

    def __post_init__(self):
        self.limit = self.bytes_left = READ_BYTES if self.bytes_left is None else self.bytes_left
        self.seconds = READ_SECONDS if self.seconds is None else self.seconds

    def read(self, fd: int, name: str, n: int) -> bytes:
        """At most ``n`` bytes of ``fd``, charged; Refused once the budget is spent."""
        start = self.clock()
        chunk = os.read(fd, n)
        self.spent += self.clock() - start
        self.charge(name, len(chunk))
        return chunk

    def charge(self, name: str, n: int) -> None:
        """Count ``n`` bytes just read from ``name``; Refused once the budget is spent."""
        self.bytes_left -= n
        if self.bytes_left < 0:
            raise Refused(f"{shown(name)} was not read to its end: the submission's files together are over "
                          f"{self.limit / 1e6:.0f} MB, the most the grader reads of one submission; clear the "
                          "notebooks' outputs and resubmit")
        if self.spent > self.seconds:
            raise Refused(f"{shown(name)} was not read to its end: reading the submission took over "
                          f"{self.seconds:g} s (a slow or unusual file); submit the notebook files themselves")


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


def read_regular(dir_fd: int, folder: Path, name: str, cap: int = HARD_LIMIT_BYTES,
                 budget: Budget | None = None) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file ``name`` (at most ``cap``) and its ``fstat``; raises Refused.
    Each chunk read is charged to ``budget`` (a fresh one by default)."""
    budget = budget if budget is not None else Budget()
    before = _lstat(dir_fd, folder, name, stat.S_ISREG)
    if before.st_size > cap:
        raise Refused(f"{shown(name)} is {before.st_size / 1e6:.0f} MB, too large to read; "
                      "clear its outputs and resubmit")
    fd = _open_checked(dir_fd, name, NOFOLLOW, before, stat.S_ISREG)
    try:
        _refuse_holes(fd, name)
        chunks, total = [], 0
        while total <= cap:
            chunk = budget.read(fd, name, min(_CHUNK, cap + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > cap:
            raise Refused(f"{shown(name)} grew past {cap >> 20} MB while it was read")
        return b"".join(chunks), os.fstat(fd)
    finally:
        os.close(fd)


def _refuse_holes(fd: int, name: str) -> None:
    """Refused when the file has a hole: a notebook is text, and a hole reads as zero bytes that were never
    written (a sparse file claims any size at no cost to its maker's disk, and would cost the grader's time)."""
    size = os.fstat(fd).st_size
    try:
        hole = os.lseek(fd, 0, os.SEEK_HOLE)
    except OSError:                                   # a filesystem that cannot tell: the budget still bounds it
        return
    os.lseek(fd, 0, os.SEEK_SET)
    if hole < size:
        raise Refused(f"{shown(name)} is a sparse file (it claims {size / 1e6:.0f} MB, with holes no one wrote); "
                      "a notebook has none, so it was not read. Submit the notebook file itself")
