"""Links, hard links and copies that point at someone else's work are integrity events.

A student whose notebook is a link to a classmate's, or to the instructor's
``source/`` (the solutions), must not be graded on that work. Links are never
followed (``files.py``); here the link's target is only named, to tell the
instructor whose files it points at. Hard links and byte-identical copies of
the instructor's source notebooks are found by inode and by digest (not
graded); a hard link to, or a byte-identical copy of, a classmate's notebook
is graded but flagged on both (nobody can tell from the bytes who copied).
"""
from __future__ import annotations

import functools
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..inert import shown
from .expected import CourseNotebooks
from .files import MAX_NOTEBOOK_BYTES, Link, listing, open_folder, read_regular
from .model import Refused
from .names import notebook_for
from .parse import digest_of
from .secret import SECRET, class_secrets, is_link, secret_in, sharers

_MAX_CLASSMATES = 5_000
_MAX_PER_STUDENT = 20


@dataclass(frozen=True)
class Context:
    course: Path
    assignment: str
    student: str | None
    notebooks: CourseNotebooks


def owner_of(path: Path, ctx: Context) -> str | None:
    """Whose files ``path`` lies among, when it is not this student's own; None if nobody's in the course.
    A classmate is never named here (the message reaches the student's feedback): see ``classmate_of``."""
    course = ctx.course.resolve()
    for folder, label in (("source", "the instructor's source/ folder (the solutions)"),
                          ("release", "the course's release/ folder"), ("autograded", "autograded/"),
                          ("feedback", "feedback/")):
        if path.is_relative_to(course / folder):
            return label
    if path.is_relative_to(course / "submitted"):
        parts = path.relative_to(course / "submitted").parts
        return "a classmate's submission" if parts and parts[0] != ctx.student else None
    return "the course folder" if path.is_relative_to(course) else None


def classmate_of(path: Path, ctx: Context) -> str | None:
    """The classmate whose submission ``path`` lies in (for the instructor's eyes only), else None."""
    submitted = ctx.course.resolve() / "submitted"
    if not path.is_relative_to(submitted):
        return None
    parts = path.relative_to(submitted).parts
    return parts[0] if parts and parts[0] != ctx.student else None


def link_event(link: Link, what: str, ctx: Context) -> tuple[str, str]:
    """(message, the instructor's detail) for a link found where ``what`` should be."""
    owner, other = owner_of(link.points_to, ctx), classmate_of(link.points_to, ctx)
    private = f"{what} links to classmate {shown(other)}'s submission." if other else ""
    if owner:
        target = "" if other else f" ({shown(link.target)})"            # a classmate's path names them
        return (f"Integrity: {what} is a link to {owner}{target}. Links are not followed; it was not graded "
                "and must be reviewed."), private
    return (f"{what} is a link (to {shown(link.target)}), not a file; links are not followed, so it was not "
            "graded. Submit the notebook itself."), ""


def copy_event(st: os.stat_result, what: str, ctx: Context) -> tuple[str, bool, str] | None:
    """(message, withhold, the instructor's detail) when the file is the instructor's or a classmate's
    (the same file: a hard link); withhold means not graded."""
    if (st.st_dev, st.st_ino) in ctx.notebooks.instructor_files:
        return f"Integrity: {what} is a hard link to the instructor's own notebook; it was not graded.", True, ""
    if st.st_nlink > 1:
        other = _hard_linked_classmate(st, ctx)
        if other:
            return (f"Integrity: {what} is the same file (a hard link) as a classmate's notebook; it was "
                    "graded, but both must be reviewed.", False, f"{what}: hard link with classmate {shown(other)}.")
    return None


def source_event(digest: str, what: str, ctx: Context) -> str | None:
    """The message when the notebook's content (``parse.digest``) is a source notebook's: not graded."""
    source = ctx.notebooks.source_digests.get(digest)
    if source is None:
        return None
    return (f"Integrity: {what} is an exact copy of the instructor's source notebook {source}.ipynb (with the "
            "solutions; re-encoding it changes nothing); it was not graded.")


def twin_event(digest: str, what: str, ctx: Context) -> tuple[str, str] | None:
    """(message, the instructor's detail) when classmates submitted a notebook with this content
    (``parse.digest``, whatever the encoding). Call it only for a notebook with work in it: two students
    who saved an untouched notebook in the same Jupyter may well have identical files."""
    twins = _identical_classmates(digest, ctx)
    if not twins:
        return None
    more = f" and {len(twins) - 3} more" if len(twins) > 3 else ""
    return (f"Integrity: {what} is the same notebook as a classmate's (identical content, whatever its "
            "encoding); it was graded, but both must be reviewed.",
            f"{what}: the same notebook as classmate(s) {', '.join(shown(t) for t in twins[:3])}{more}.")


def _identical_classmates(digest: str, ctx: Context) -> list[str]:
    """Classmates who submitted a notebook with this content (an untouched release copy excepted)."""
    if digest in ctx.notebooks.release_digests:
        return []
    submitted = ctx.course / "submitted"
    key = tuple(_stamp(submitted / s / ctx.assignment) for s in _students(submitted))    # a new class, a new read
    owners = class_digests(submitted, ctx.assignment, tuple(ctx.notebooks.names), key).get(digest, ())
    return sorted(s for s in owners if s != ctx.student)


@functools.lru_cache(maxsize=4)
def class_digests(submitted: Path, assignment: str, names: tuple, key: tuple) -> dict[str, frozenset]:
    """The content digest of each classmate's notebook -> who submitted it, read once per process and class.

    Read as intake reads: no links followed, regular files only, capped, decoded and parsed by
    ``parse.read_notebook``; anything odd (or not a notebook) is skipped.
    """
    owners: dict[str, set] = {}
    for student in _students(submitted):
        try:
            fd = open_folder(submitted / student / assignment, 2)
        except (Refused, OSError):
            continue
        try:
            for file in [f for f in listing(fd) if notebook_for(f, names)][:_MAX_PER_STUDENT]:
                try:
                    data, _ = read_regular(fd, submitted / student / assignment, file, MAX_NOTEBOOK_BYTES)
                except (Refused, OSError):
                    continue
                found = digest_of(data)
                if found is not None:
                    owners.setdefault(found, set()).add(student)
        finally:
            os.close(fd)
    return {d: frozenset(s) for d, s in owners.items()}


def secret_event(fd: int, ctx: Context) -> tuple[str, str] | None:
    """(message, the instructor's detail) when the submission's secret (which decides who receives its
    feedback) is a link or is the same as a classmate's: nbgrader gives every submission its own."""
    if is_link(fd):
        return (f"Integrity: {SECRET} is a link, not the secret nbgrader wrote for this submission; its feedback "
                "cannot be delivered through nbgrader and it must be reviewed.", "")
    secret = secret_in(fd)
    if not isinstance(secret, bytes):
        return None                                        # missing or malformed: the outputs say why
    submitted = ctx.course / "submitted"
    key = tuple(_stamp(submitted / s / ctx.assignment) for s in _students(submitted))
    others = [s for s in _secret_owners(submitted, ctx.assignment, key).get(secret, ()) if s != ctx.student]
    if not others:
        return None
    return (f"Integrity: {SECRET} is the same as a classmate's submission's (nbgrader gives every submission its "
            "own), so its feedback would reach them too; it is not delivered through nbgrader to either, and both "
            "must be reviewed.", f"{SECRET}: the same as classmate(s) {', '.join(shown(o) for o in sorted(others)[:3])}.")


@functools.lru_cache(maxsize=4)
def _secret_owners(submitted: Path, assignment: str, key: tuple) -> dict[bytes, tuple]:
    """secret -> the students whose submission holds it, read once per process and class."""
    secrets = class_secrets(submitted, assignment, _students(submitted))
    shared = sharers(secrets)
    return {secrets[s]: (s, *shared[s]) for s in shared}


def _stamp(folder: Path) -> tuple:
    try:
        st = os.stat(folder, follow_symlinks=False)
    except OSError:
        return (str(folder),)
    return (str(folder), st.st_ino, st.st_mtime_ns)


def _students(submitted: Path) -> list[str]:
    try:
        with os.scandir(submitted) as entries:
            return sorted(e.name for e in entries)[:_MAX_CLASSMATES]
    except OSError:
        return []


def _hard_linked_classmate(st: os.stat_result, ctx: Context) -> str | None:
    root = ctx.course / "submitted"
    try:
        students = [e.name for e in os.scandir(root) if e.name != ctx.student][:_MAX_CLASSMATES]
    except OSError:
        return None
    for student in students:
        folder = root / student / ctx.assignment
        try:
            linked = os.path.islink(root / student) or os.path.islink(folder)      # never followed
            entries = [] if linked else list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            other = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(other.st_mode) and (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
                return student
    return None
