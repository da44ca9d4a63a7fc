"""Whose the course is: every folder and file the grader trusts is the running account's, and no one else's to write.

The grader takes the course's settings, source notebooks (the hidden tests), late-penalty plugin, gradebook and
output folders as the instructor's. Another account that owns one of them, or may write where they are, can make
the grader (often root, or the instructor's account behind a Hub) do what that account likes: replace
``nbgrader_config.py`` between ``init`` and the command it prints, plant a plugin module, edit a hidden test,
swap the gradebook. So each is checked when the course is read (``settings.load_course``, which every command
goes through) and before ``init`` writes: it must belong to the account running the grader (or to root), and
neither its group (unless the owner alone is in it) nor everyone may write to it. A folder above the course may
be writable by all only with the sticky bit (as /tmp is), so that no one else can rename the course away.
Anything else is refused with one line naming the path, its owner and what to do. Links are judged by what they
point to. Submissions (``submitted/``, the exchange) are the students' by design and are not checked here.
"""
from __future__ import annotations

import grp
import os
import pwd
import stat
from pathlib import Path

CONFIG = "nbgrader_config.py"                # the course's settings file (settings.py reads it)

CHECKED_FOLDERS = ("source", "release", "grading", "autograded", "feedback")


class NotYours(ValueError):
    """A folder or file the grader trusts is another account's, or others may write to it."""


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except (KeyError, OSError):
        return f"uid {uid}"


def _group_of_owner_alone(gid: int, owner: int) -> bool:
    """Whether only the owner is in group ``gid`` (a user private group): its write bit gives no one else a say."""
    try:
        group = grp.getgrgid(gid)
        name = pwd.getpwuid(owner).pw_name
    except (KeyError, OSError):
        return False
    others = [m for m in group.gr_mem if m != name]
    return not others and not any(p.pw_gid == gid and p.pw_uid != owner for p in pwd.getpwall())


def problem(path: Path, what: str, *, above: bool = False, me: int | None = None) -> str | None:
    """Why the grader cannot trust ``path`` (``what`` it is to the grader), or None. ``above``: a folder above
    the course, which may be writable by all when sticky."""
    me = os.geteuid() if me is None else me
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{path} ({what}) cannot be checked ({exc.strerror}): the grader reads only what it can check"
    if st.st_uid not in (me, 0):
        return (f"{path} ({what}) belongs to {_name(st.st_uid)}, not to {_name(me)}, who runs the grader: another "
                f"account could change what the grader trusts there; have {_name(me)} own it (chown) or use a "
                "course folder of your own")
    mode = stat.S_IMODE(st.st_mode)
    sticky = above and stat.S_ISDIR(st.st_mode) and mode & stat.S_ISVTX      # (no one renames what is not theirs)
    writers = None if sticky else "everyone" if mode & stat.S_IWOTH else (
        f"the group {_group_name(st.st_gid)}" if mode & stat.S_IWGRP and not _group_of_owner_alone(st.st_gid, st.st_uid)
        else None)
    if writers:
        return (f"{path} ({what}, owner {_name(st.st_uid)}, mode {mode:04o}) can be written by {writers}: another "
                f"account could change what the grader trusts there; run chmod go-w {path}")
    return None


def _group_name(gid: int) -> str:
    try:
        return repr(grp.getgrgid(gid).gr_name)
    except (KeyError, OSError):
        return f"gid {gid}"


def check_folder_and_above(folder: Path, what: str) -> None:
    """``folder`` and every folder above it (those above: writable by all only when sticky); NotYours if not."""
    folder = Path(os.path.abspath(folder))
    for above in reversed(folder.parents):
        _raise(problem(above, "a folder above the course", above=True))
    _raise(problem(folder, what))


def check_course(root: Path, db_url: str | None = None) -> None:
    """Everything of the course at ``root`` the grader trusts; NotYours (one line) for the first that fails."""
    root = Path(root)
    check_folder_and_above(root, "the course folder")
    for path in sorted(root.glob("*.py")):                   # the config, a late-penalty plugin module
        _raise(problem(path, "course settings or code the grader loads" if path.name != CONFIG
                       else "the course's settings"))
    for name in CHECKED_FOLDERS:
        _raise(problem(root / name, f"the course's {name} folder"))
        for sub in sorted((root / name).glob("*/*")) if name in ("source", "release") else ():
            _raise(problem(sub.parent, f"an assignment's {name} folder"))
            _raise(problem(sub, f"a {name} notebook"))
    gradebook = _sqlite_file(db_url)
    if gradebook is not None:
        if gradebook.parent != root:
            check_folder_and_above(gradebook.parent, "the gradebook's folder")
        _raise(problem(gradebook, "the course's gradebook"))


def _sqlite_file(db_url: str | None) -> Path | None:
    """The file of a SQLite gradebook URL as ``settings.resolve_db_url`` gives it (absolute), else None."""
    prefix = "sqlite:///"
    if not db_url or not db_url.startswith(prefix) or db_url == prefix:
        return None
    return Path(db_url[len(prefix):].split("?", 1)[0])


def _raise(why: str | None) -> None:
    if why:
        raise NotYours(why)
