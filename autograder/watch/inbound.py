"""The exchange's inbound folder, read as hostile input.

Every student can write there (nbgrader makes it 0733), so anything may stand in it: a folder named
as nbgrader's ``submit`` names it (``<student>+<assignment>+<timestamp>[+<random>]``, split as
``nbgrader collect`` splits it), or a link, a FIFO, a file, a name that is none of these, a folder
whose ``submission_secret.txt`` is missing, a link, huge or not hex. Each entry is looked at through
a folder descriptor without following links or opening anything but a regular file, and becomes
either a ``Ready`` submission or a ``problem`` (a note for the instructor); nothing here raises.

A submission is complete when nbgrader's ``submit`` has finished it: it writes the notebooks, then
``timestamp.txt`` and the secret, and opens the folder's mode to 0777 last. A folder that never gets
there (a copy by hand, a crashed submit) is taken as it is once nothing in it, the files grading takes
included, changed for ``SETTLE_SECONDS``.

When it counts as received is the service's own clock (``receive``): the moment the service read the
complete files it grades, whose digest is journaled, and what is graded must be exactly those bytes
(the record's digest is compared before a page is made). It is earlier only when the kernel's change
times of those files and the folder (which no student can set back; writing a file in place moves
them) and nbgrader's ``timestamp.txt`` both say the files were complete earlier: a backlog read when
the service starts is not late for having waited.
"""
from __future__ import annotations

import hashlib
import os
import pwd
import stat
import time
from dataclasses import dataclass, replace
from datetime import timezone
from pathlib import Path

from ..assignment import NOTEBOOKS
from ..inert import shown
from ..gradebook.timestamps import read_timestamp
from ..intake.digest import TIMESTAMP, submission_digest
from ..intake.files import MAX_LISTING, NOFOLLOW, Budget, kind
from ..intake.names import notebook_for
from ..intake.secret import MAX_SECRET_BYTES, SECRET, secret_in  # noqa: F401 - one reader of the secret
from ..intake.take import names_in, wanted

SETTLE_SECONDS = 10.0
MAX_NOTEBOOKS = 50                  # notebook files of one submission that get a page
_NAMES = tuple(sorted(NOTEBOOKS))     # the notebooks grading takes, in a stable order


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
    received: float                  # when it counts as received (the server's clock; see ``receive``)
    notebooks: tuple[str, ...]       # the stems of its .ipynb files, what fetch_feedback looks pages up by
    submission: str = ""             # the digest of the files grading takes, as read when received
    owner: int = -1                  # the uid owning the folder (whoever ran nbgrader's submit)


@dataclass(frozen=True)
class Waiting:
    signature: tuple                 # changes while nbgrader's submit is still writing


@dataclass(frozen=True)
class Problem:
    note: str


def examine(inbound_fd: int, name: str, settled: bool, names=_NAMES) -> Ready | Waiting | Problem:
    """What the entry ``name`` of inbound is; ``settled``: it has not changed for SETTLE_SECONDS; ``names``:
    the notebooks grading takes (their files are part of what must not change)."""
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
        return _examine_folder(fd, name, settled, names)
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
    nbgrader's submit leaves the folder owned by the one who ran it, so a folder owned by an account of this
    machine whose name is not the student's was made by someone else: in a classmate's name (it would use
    up their checks), or in a name no account has (an invented student, with checks of its own). None
    where the owner is the student, root or this service's own account (one account shared by everyone,
    or a copy by hand), or a uid this machine has no account for (a container's): then the name is taken
    as written, as before."""
    named = account_uid(student)
    if owner in (0, os.geteuid()) or named == owner:
        return None
    try:
        who = pwd.getpwuid(owner).pw_name
    except (KeyError, OSError):
        if named is None:
            return None                   # neither the owner nor the name is an account here: cannot be told
        who = f"uid {owner}"
    nobody = " (no account has that name: an invented student)" if named is None else ""
    return f"belongs to {shown(who)}, not to {shown(student)} whose name it bears{nobody}"


def owner_of(uid: int, student: str) -> str:
    """Who a submission's limits and turn belong to: its owning account, or its name where the account is
    shared (root, this service's own) or unknown here."""
    try:
        return "account:" + pwd.getpwuid(uid).pw_name if uid not in (0, os.geteuid()) else "name:" + student
    except (KeyError, OSError):
        return "name:" + student


def accounts_line() -> str:
    """What the owner check can tell on this machine, said when the service starts."""
    try:
        me = pwd.getpwuid(os.geteuid()).pw_name
    except (KeyError, OSError):
        me = f"uid {os.geteuid()}"
    return (f"owners: a submission owned by an account of this machine must bear that account's name (else it is "
            f"an impostor: not graded, no page, no check used); limits and turns count per account. Submissions "
            f"owned by root or by this service's account ({me}: students sharing one account) or by a uid with "
            "no account here are taken by the name they bear, one name one limit")


def _examine_folder(fd: int, name: str, settled: bool, names) -> Ready | Waiting | Problem:
    st = os.fstat(fd)
    other = impostor(st.st_uid, name.rsplit("+", 3)[0])
    if other:
        return Problem(f"submission {shown(name)} {other}; it was not graded, gets no page and does not count "
                       "against the student's checks")
    secret = secret_in(fd)
    finished = stat.S_IMODE(st.st_mode) & 0o777 == 0o777        # nbgrader's submit is done with it
    if not finished and not settled:
        return Waiting((st.st_mtime_ns, st.st_ctime_ns, stat.S_IMODE(st.st_mode), secret, graded_files(fd, names)))
    if not isinstance(secret, bytes):
        return Problem(f"submission {shown(name)}: {secret}, so its feedback could not be delivered to "
                       "anyone; it was not graded (ask the student to submit again with nbgrader)")
    return Ready(secret.decode("ascii"), hashlib.sha256(secret).hexdigest(), st.st_ctime, _notebooks(fd),
                 owner=st.st_uid)


def graded_files(fd: int, names) -> tuple:
    """(file, size, change time, inode) of each file grading takes from the folder open as ``fd``, and of
    ``timestamp.txt``: a change to any of them is a change of the submission."""
    files, _ = names_in(fd, names)
    out = []
    for file in [f.file for f in wanted(Path("."), False, files, names)[0] if f.file] + [TIMESTAMP]:
        try:
            st = os.stat(file, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue
        out.append((file, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    return tuple(out)


def receive(inbound: Path, name: str, ready: Ready, names, budget: Budget | None = None) -> Ready:
    """``ready`` with what was read when the service first read its complete graded files: their digest
    (``intake.digest``: the same files and bytes grading takes, charged to ``budget``, every hard link as read)
    and the moment it counts as received."""
    folder = Path(inbound) / name
    digest = submission_digest(folder, names, budget=budget)
    read_at = time.time()
    try:
        fd = os.open(folder, NOFOLLOW | os.O_DIRECTORY)
    except OSError:
        return replace(ready, submission=digest, received=read_at)
    try:
        changed = max([os.fstat(fd).st_ctime, *(_ctime(fd, f[0]) for f in graded_files(fd, names))])
    finally:
        os.close(fd)
    stamp = read_timestamp(folder).at
    stamped = stamp.replace(tzinfo=timezone.utc).timestamp() if stamp else changed
    return replace(ready, submission=digest, received=min(read_at, max(changed, stamped)))


def _ctime(fd: int, file: str) -> float:
    try:
        return os.stat(file, dir_fd=fd, follow_symlinks=False).st_ctime
    except OSError:
        return 0.0


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
