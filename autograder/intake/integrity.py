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
from .files import MAX_NOTEBOOK_BYTES, Budget, Link, listing, open_folder
from .model import IntegrityEvent, Refused
from .parse import digest_of
from .secret import SECRET, class_secrets, is_link, sharers
from .take import names_in, take, wanted

_MAX_CLASSMATES = 5_000
_MAX_ENTRIES = 1_000     # entries of one classmate's folder looked at for hard links


@dataclass(frozen=True)
class Context:
    course: Path
    assignment: str
    student: str | None
    notebooks: CourseNotebooks
    snapshot: str | None = None     # a batch's token: its classmates are read once per process (``class_index``)


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


def link_event(link: Link, what: str, ctx: Context) -> IntegrityEvent:
    """A link found where ``what`` should be: links are not followed, so it is not graded."""
    owner, other = owner_of(link.points_to, ctx), classmate_of(link.points_to, ctx)
    private = f"{what} links to classmate {shown(other)}'s submission." if other else ""
    if owner:
        target = "" if other else f" ({shown(link.target)})"            # a classmate's path names them
        return IntegrityEvent(f"Integrity: {what} is a link to {owner}{target}. Links are not followed; it was "
                              "not graded and must be reviewed.", private, withholds=True)
    return IntegrityEvent(f"{what} is a link (to {shown(link.target)}), not a file; links are not followed, so it "
                          "was not graded. Submit the notebook itself.", withholds=True,
                          suspicion=False)         # it accuses no one: the student is told what to hand in


def copy_event(st: os.stat_result, what: str, ctx: Context) -> IntegrityEvent | None:
    """When the file is the instructor's (not graded) or a classmate's (graded; the same file: a hard link)."""
    if (st.st_dev, st.st_ino) in ctx.notebooks.instructor_files:
        return IntegrityEvent(f"Integrity: {what} is a hard link to the instructor's own notebook; it was not "
                              "graded.", withholds=True)
    if st.st_nlink > 1:
        other = _hard_linked_classmate(st, ctx)
        if other:
            return IntegrityEvent(f"Integrity: {what} is the same file (a hard link) as a classmate's notebook; "
                                  "it was graded, but both must be reviewed.",
                                  f"{what}: hard link with classmate {shown(other)}.")
    return None


def source_event(digest: str, what: str, ctx: Context) -> IntegrityEvent | None:
    """When the notebook's content (``parse.digest``) is a source notebook's: not graded."""
    source = ctx.notebooks.source_digests.get(digest)
    if source is None:
        return None
    return IntegrityEvent(f"Integrity: {what} is an exact copy of the instructor's source notebook {source}.ipynb "
                          "(with the solutions; re-encoding it changes nothing); it was not graded.", withholds=True)


def twin_event(digest: str, what: str, ctx: Context) -> IntegrityEvent | None:
    """When classmates submitted a notebook with this content (graded, flagged on both)
    (``parse.digest``, whatever the encoding). Call it only for a notebook with work in it: two students
    who saved an untouched notebook in the same Jupyter may well have identical files."""
    twins = _identical_classmates(digest, ctx)
    if not twins:
        return None
    more = f" and {len(twins) - 3} more" if len(twins) > 3 else ""
    return IntegrityEvent(f"Integrity: {what} is the same notebook as a classmate's (identical content, whatever "
                          "its encoding); it was graded, but both must be reviewed.",
                          f"{what}: the same notebook as classmate(s) {', '.join(shown(t) for t in twins[:3])}{more}.")


def _identical_classmates(digest: str, ctx: Context) -> list[str]:
    """Classmates who submitted a notebook with this content (an untouched release copy excepted)."""
    if digest in ctx.notebooks.release_digests:
        return []
    owners = class_index(ctx).digests.get(digest, ())
    return sorted(s for s in owners if s != ctx.student)


def _hard_linked_classmate(st: os.stat_result, ctx: Context) -> str | None:
    owners = class_index(ctx).files.get((st.st_dev, st.st_ino), ())
    return min((s for s in owners if s != ctx.student), default=None)


@dataclass(frozen=True)
class ClassIndex:
    """What copy detection needs to know about the whole class, read in one pass over it."""
    digests: dict        # content digest of a notebook (``parse.digest``) -> the students who submitted it
    files: dict          # (st_dev, st_ino) of each regular file in a submission folder -> its students


def class_index(ctx: Context) -> ClassIndex:
    """The class as a batch sees it: read once per process and batch (``ctx.snapshot``), so each
    submission's copy checks are lookups, whatever the size of the class (reading or even stat-ing every
    classmate's folder for each submission made a batch's cost grow with the square of the class).
    Without a snapshot (one submission checked on its own) the class is read now."""
    key = (ctx.course / "submitted", ctx.assignment, tuple(ctx.notebooks.names))
    return _pinned_index(*key, ctx.snapshot) if ctx.snapshot else read_class(*key)


@functools.lru_cache(maxsize=2)
def _pinned_index(submitted: Path, assignment: str, names: tuple, snapshot: str) -> ClassIndex:
    return read_class(submitted, assignment, names)


def read_class(submitted: Path, assignment: str, names: tuple) -> ClassIndex:
    """Every classmate's submission folder, read as intake reads: no links followed, regular files
    only, capped, notebooks decoded and parsed by ``parse.read_notebook``; anything odd is skipped."""
    digests: dict[str, set] = {}
    files: dict[tuple, set] = {}
    for student in _students(submitted):
        try:
            fd = open_folder(submitted / student / assignment, 2)
        except (Refused, OSError):
            continue
        try:
            entries = listing(fd)[:_MAX_ENTRIES]
            for file in entries:
                st = _regular(fd, file)
                if st is not None:
                    files.setdefault((st.st_dev, st.st_ino), set()).add(student)
            for found in _graded(fd, submitted / student / assignment, names):
                digests.setdefault(found, set()).add(student)
        finally:
            os.close(fd)
    return ClassIndex({d: frozenset(s) for d, s in digests.items()}, {f: frozenset(s) for f, s in files.items()})


def _graded(fd: int, folder: Path, names: tuple) -> list[str]:
    """The content digests of the notebooks a classmate's grading takes (``take``), within one budget; a
    notebook over ``MAX_NOTEBOOK_BYTES`` has none and is not read (it cost every grading process of the
    class its size, for nothing)."""
    budget, out = Budget(bytes_left=MAX_NOTEBOOK_BYTES * max(len(names), 1)), []
    for found in wanted(folder, False, names_in(fd, names)[0], names)[0]:
        raw = take(fd, folder, found, budget, MAX_NOTEBOOK_BYTES).release()
        if raw is not None and len(raw) <= MAX_NOTEBOOK_BYTES and (content := digest_of(raw)) is not None:
            out.append(content)
    return out


def secret_event(fd: int, secret: bytes | str, ctx: Context) -> IntegrityEvent | None:
    """When the submission's secret (which decides who receives its
    feedback; ``secret``: ``secret_in(fd)``, read once) is a link or is the same as a classmate's: nbgrader
    gives every submission its own."""
    if is_link(fd):
        return IntegrityEvent(f"Integrity: {SECRET} is a link, not the secret nbgrader wrote for this submission; "
                              "its feedback cannot be delivered through nbgrader and it must be reviewed.")
    if not isinstance(secret, bytes):
        return None                                        # missing or malformed: the outputs say why
    others = [s for s in _secret_owners_of(ctx).get(secret, ()) if s != ctx.student]
    if not others:
        return None
    return IntegrityEvent(f"Integrity: {SECRET} is the same as a classmate's submission's (nbgrader gives every "
                          "submission its own), so its feedback would reach them too; it is not delivered through "
                          "nbgrader to either, and both must be reviewed.",
                          f"{SECRET}: the same as classmate(s) {', '.join(shown(o) for o in sorted(others)[:3])}.")


def _secret_owners_of(ctx: Context) -> dict[bytes, tuple]:
    """secret -> the students whose submission holds it: read once per process and batch (``ctx.snapshot``,
    as ``class_index``), or now for a submission checked on its own."""
    submitted = ctx.course / "submitted"
    if ctx.snapshot:
        return _pinned_secret_owners(submitted, ctx.assignment, ctx.snapshot)
    return _secret_owners(submitted, ctx.assignment)


@functools.lru_cache(maxsize=2)
def _pinned_secret_owners(submitted: Path, assignment: str, snapshot: str) -> dict[bytes, tuple]:
    return _secret_owners(submitted, assignment)


def _secret_owners(submitted: Path, assignment: str) -> dict[bytes, tuple]:
    """secret -> the students whose submission holds it (one pass over the class)."""
    secrets = class_secrets(submitted, assignment, _students(submitted))
    shared = sharers(secrets)
    return {secrets[s]: (s, *shared[s]) for s in shared}


def _regular(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def _students(submitted: Path) -> list[str]:
    try:
        with os.scandir(submitted) as entries:
            return sorted(e.name for e in entries)[:_MAX_CLASSMATES]
    except OSError:
        return []
