"""The exchange's inbound folder, read as hostile input.

Every student can write there (nbgrader makes it 0733), so anything may stand in it: a folder named
as nbgrader's ``submit`` names it (``<student>+<assignment>+<timestamp>[+<random>]``, split as
``nbgrader collect`` splits it), or a link, a FIFO, a file, a name that is none of these, a folder
whose ``submission_secret.txt`` is missing, a link, huge or not hex. Each entry is looked at through
a folder descriptor without following links or opening anything but a regular file, and becomes
either a ``Ready`` submission or a ``problem`` (a note for the instructor); nothing here raises.

A submission is complete when nbgrader's ``submit`` has finished it: it writes the notebooks, then
``timestamp.txt`` and the secret, and opens the folder's mode to 0777 last. A folder that never gets
there (a copy by hand, a crashed submit) is taken as it is once nothing in it changed for
``SETTLE_SECONDS``.
"""
from __future__ import annotations

import hashlib
import os
import pwd
import stat
from dataclasses import dataclass

from ..assignment import NOTEBOOKS
from ..inert import shown
from ..intake.files import MAX_LISTING, NOFOLLOW, kind
from ..intake.names import notebook_for
from ..intake.secret import MAX_SECRET_BYTES, SECRET, secret_in  # noqa: F401 - one reader of the secret

SETTLE_SECONDS = 10.0
MAX_NOTEBOOKS = 50                  # notebook files of one submission that get a page


@dataclass(frozen=True)
class Name:
    student: str
    assignment: str
    timestamp: str


def parse_name(name: str) -> Name | str:
    """The parts of an inbound name as ``nbgrader collect`` reads them, or why it is not one."""
    parts = name.rsplit("+", 3)
    if len(parts) < 3 or not all(parts[:3]):
        return (f"inbound entry {shown(name)} is not named <student>+<assignment>+<timestamp> as nbgrader's "
                "submit names a submission; it was not graded")
    if name.startswith(".") or "*" in parts[0]:
        return f"inbound entry {shown(name)} names no valid student; it was not graded"
    return Name(parts[0], parts[1], parts[2])


@dataclass(frozen=True)
class Ready:
    secret: str                      # the submission's secret, exactly as nbgrader wrote it
    digest: str                      # sha256 of it: what the journal keeps (never the secret itself)
    received: float                  # when the folder took its last change (the server's clock)
    notebooks: tuple[str, ...]       # the stems of its .ipynb files, what fetch_feedback looks pages up by


@dataclass(frozen=True)
class Waiting:
    signature: tuple                 # changes while nbgrader's submit is still writing


@dataclass(frozen=True)
class Problem:
    note: str


def examine(inbound_fd: int, name: str, settled: bool) -> Ready | Waiting | Problem:
    """What the entry ``name`` of inbound is; ``settled``: it has not changed for SETTLE_SECONDS."""
    try:
        st = os.stat(name, dir_fd=inbound_fd, follow_symlinks=False)
    except OSError as exc:
        return Problem(f"inbound entry {shown(name)} could not be read ({exc.strerror}); it was not graded")
    if not stat.S_ISDIR(st.st_mode):
        return Problem(f"inbound entry {shown(name)} is {kind(st.st_mode)}, not a submission folder; "
                       "it was not graded (links are never followed)")
    try:
        fd = os.open(name, NOFOLLOW | os.O_DIRECTORY, dir_fd=inbound_fd)
    except OSError as exc:
        return Problem(f"inbound entry {shown(name)} could not be opened ({exc.strerror}); it was not graded")
    try:
        return _examine_folder(fd, name, settled)
    finally:
        os.close(fd)


def account_uid(student: str) -> int | None:
    """The uid of the machine's account named as the student (a JupyterHub user), None where there is none."""
    try:
        return pwd.getpwnam(student).pw_uid
    except (KeyError, ValueError, OSError):
        return None


def impostor(owner: int, student: str) -> str | None:
    """Why a folder owned by ``owner`` cannot be ``student``'s submission: where students have accounts,
    nbgrader's submit leaves the folder owned by the one who ran it, so a folder owned by another account
    (not root, not this service's own user, who may copy by hand) was made in the student's name by
    someone else, and would use up their checks. None where the owner is the student or cannot be told."""
    uid = account_uid(student)
    if uid is None or owner in (uid, 0, os.geteuid()):
        return None
    try:
        who = pwd.getpwuid(owner).pw_name
    except (KeyError, OSError):
        who = f"uid {owner}"
    return f"belongs to {shown(who)}, not to {shown(student)} whose name it bears"


def _examine_folder(fd: int, name: str, settled: bool) -> Ready | Waiting | Problem:
    st = os.fstat(fd)
    other = impostor(st.st_uid, name.rsplit("+", 3)[0])
    if other:
        return Problem(f"submission {shown(name)} {other}; it was not graded, gets no page and does not count "
                       "against the student's checks")
    secret = secret_in(fd)
    finished = stat.S_IMODE(st.st_mode) & 0o777 == 0o777        # nbgrader's submit is done with it
    if not finished and not settled:
        return Waiting((st.st_mtime_ns, st.st_ctime_ns, stat.S_IMODE(st.st_mode), secret))
    if not isinstance(secret, bytes):
        return Problem(f"submission {shown(name)}: {secret}, so its feedback could not be delivered to "
                       "anyone; it was not graded (ask the student to submit again with nbgrader)")
    return Ready(secret.decode("ascii"), hashlib.sha256(secret).hexdigest(), st.st_ctime, _notebooks(fd))


def _notebooks(fd: int) -> tuple[str, ...]:
    """The stems of the folder's regular .ipynb files (links left out), among its first MAX_LISTING names;
    at most MAX_NOTEBOOKS, the assignment's own notebooks first."""
    stems = []
    with os.scandir(fd) as it:
        for seen, entry in enumerate(it):
            if seen >= MAX_LISTING:
                break
            if entry.name.endswith(".ipynb") and entry.is_file(follow_symlinks=False):
                stems.append(entry.name[: -len(".ipynb")])
    ours = [s for s in stems if notebook_for(f"{s}.ipynb", tuple(NOTEBOOKS))]
    return tuple(sorted(ours) + sorted(s for s in stems if s not in ours))[:MAX_NOTEBOOKS]
