"""Links, hard links and copies that point at someone else's work are integrity events.

A student whose notebook is a link to a classmate's, or to the instructor's
``source/`` (the solutions), must not be graded on that work. Links are never
followed (``files.py``); here the link's target is only named, to tell the
instructor whose files it points at. Hard links and byte-identical copies of
the instructor's source notebooks are found by inode and by digest.
"""
from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..inert import shown
from .expected import CourseNotebooks
from .files import Link

_MAX_CLASSMATES = 5_000


@dataclass(frozen=True)
class Context:
    course: Path
    assignment: str
    student: str | None
    notebooks: CourseNotebooks


def owner_of(path: Path, ctx: Context) -> str | None:
    """Whose files ``path`` lies among, when it is not this student's own; None if nobody's in the course."""
    course = ctx.course.resolve()
    for folder, label in (("source", "the instructor's source/ folder (the solutions)"),
                          ("release", "the course's release/ folder"), ("autograded", "autograded/"),
                          ("feedback", "feedback/")):
        if path.is_relative_to(course / folder):
            return label
    if path.is_relative_to(course / "submitted"):
        parts = path.relative_to(course / "submitted").parts
        if parts and parts[0] != ctx.student:
            return f"classmate {shown(parts[0])}'s submission"
        return None
    return "the course folder" if path.is_relative_to(course) else None


def link_event(link: Link, what: str, ctx: Context) -> str:
    """The message for a link found where ``what`` should be."""
    owner = owner_of(link.points_to, ctx)
    if owner:
        return (f"Integrity: {what} is a link to {owner} ({shown(link.target)}). Links are not followed; "
                "it was not graded and must be reviewed.")
    return (f"{what} is a link (to {shown(link.target)}), not a file; links are not followed, so it was not "
            "graded. Submit the notebook itself.")


def copy_event(data: bytes, st: os.stat_result, what: str, ctx: Context) -> tuple[str, bool] | None:
    """(message, withhold) when the file is the instructor's or a classmate's; withhold means not graded."""
    if (st.st_dev, st.st_ino) in ctx.notebooks.instructor_files:
        return f"Integrity: {what} is a hard link to the instructor's own notebook; it was not graded.", True
    source = ctx.notebooks.source_digests.get(hashlib.sha256(data).hexdigest())
    if source:
        return (f"Integrity: {what} is an exact copy of the instructor's source notebook {source}.ipynb "
                "(with the solutions); it was not graded.", True)
    if st.st_nlink > 1:
        other = _hard_linked_classmate(st, ctx)
        if other:
            return (f"Integrity: {what} is the same file (a hard link) as classmate {shown(other)}'s "
                    f"notebook; it was graded, but both must be reviewed.", False)
    return None


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
