"""``python -m autograder init DIR``: lay out an nbgrader course holding this chapter.

Like ``nbgrader quickstart``, but with this package's own course: the config template,
``source/`` and ``release/`` of the chapter, and an empty ``submitted/``. Everything comes
from the package data (``autograder.course.resources``), so it works from any installed copy.
"""
from __future__ import annotations

import os
import shlex
import shutil
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..durable import replace_atomically
from . import resources
from .owner import NotYours, check_course, problem
from .resources import CHAPTER, CONFIG
from .settings import read_plain_file, read_settings


class CourseExists(ValueError):
    """The target cannot take the course: it already holds one (or other files) and no --force / --merge was
    given, or another account controls it (``owner.NotYours``)."""


@dataclass
class InitResult:
    course: Path
    written: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)     # "what: why", for what init left as it found it
    fresh: bool = False                                   # the folder was made, or found empty


def init_course(dest, *, force: bool = False, merge: bool = False, assignment: str = CHAPTER) -> InitResult:
    """Write the chapter into ``dest``; refuse to touch an existing folder unless told.

    ``merge`` keeps an existing course's config and other assignments and adds this one beside
    them; ``force`` replaces this chapter's files (and, without ``merge``, the config).
    """
    dest = Path(dest).resolve()
    _refuse_if_not_ours(dest)
    _refuse_if_occupied(dest, force=force, merge=merge, assignment=assignment)
    fresh = not dest.exists() or (dest.is_dir() and not dest.is_symlink() and not any(dest.iterdir()))
    result = InitResult(dest)
    dest.mkdir(parents=True, exist_ok=True)
    _lay_config(dest / CONFIG, result, merge=merge)
    for kind in (resources.SOURCE, resources.RELEASE):
        _lay_notebooks(dest, kind, assignment, result)
    submitted = _kind(dest / "submitted")
    if submitted == "missing":
        (dest / "submitted").mkdir()
        result.written.append("submitted/")
    elif submitted != "folder":
        result.skipped.append(f"submitted/: {_why(submitted)}; nbgrader collects submissions into a folder "
                              "submitted/ there (move it away and run init again)")
    result.fresh = fresh
    return result


def _kind(path: Path) -> str:
    """What ``path`` is, without following a link: missing, link, folder, file or other (FIFO, device...)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return "missing"
    if stat.S_ISLNK(mode):
        return "link"
    return "folder" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def _why(kind: str) -> str:
    return {"link": "it is a symbolic link, which init never writes through",
            "folder": "it is a folder, where a file belongs",
            "file": "it is a file, where a folder belongs",
            "other": "it is not a plain file or folder (a FIFO, socket or device)"}[kind] + ": left as it is"


def _lay_config(config: Path, result: InitResult, *, merge: bool) -> None:
    kind = _kind(config)
    if kind not in ("missing", "file"):
        result.skipped.append(f"{CONFIG}: {_why(kind)}; add this package's config to the course by hand "
                              "(see nbgrader_config.py in the package)")
    elif merge and kind == "file":
        result.kept.append(CONFIG)
        result.notes += add_doors(config)
    else:
        replace_file(config, resources.config_template())
        result.written.append(CONFIG)


def _lay_notebooks(course: Path, kind: str, assignment: str, result: InitResult) -> None:
    """``kind``/``assignment`` from the package; a link or a stranger on the way is left alone and named."""
    for path, wanted in ((course / kind, "folder"), (course / kind / assignment, "folder")):
        found = _kind(path)
        if found not in ("missing", wanted):
            result.skipped.append(f"{path.relative_to(course)}/: {_why(found)}; this chapter's {kind} notebooks "
                                  "were not written (move it away and run init again)")
            return
    chapter = course / kind / assignment
    if _kind(chapter) == "folder":
        shutil.rmtree(chapter)                       # --force: rmtree never follows a link inside it
    resources.copy_tree(resources.course_files().joinpath(kind).joinpath(assignment), chapter)
    result.written.append(f"{kind}/{assignment}/")


def replace_file(path: Path, text: str) -> None:
    """Put ``text`` at ``path`` whole: a new file renamed over the old one (same permissions), so a link
    or a second hard link to the old file is never written through and a kill leaves the old or the new."""
    try:
        mode = stat.S_IMODE(os.lstat(path).st_mode)
    except FileNotFoundError:
        mode = 0o644
    replace_atomically(path, text.encode("utf-8"), mode)


DOORS_BEGIN = "# --- the hardened grader's doors"
DOORS_END = "# --- end of the hardened grader's doors ---"
DOOR_SETTINGS = ("Autograde.autograde_preprocessors", "GenerateFeedback.preprocessors")


def doors_block() -> str:
    """The template's settings that send nbgrader's own autograde (and feedback) through the hardened grader."""
    text = resources.config_template()
    start, end = text.index(DOORS_BEGIN), text.index(DOORS_END) + len(DOORS_END)
    return text[start:end] + "\n"


def add_doors(config: Path) -> list[str]:
    """Append the doors block to an existing course's config, unless the course already sets those steps
    itself (then they are the instructor's: a note says what to add). Other assignments keep nbgrader's
    own execution either way."""
    text = read_plain_file(config).decode("utf-8-sig")
    if DOORS_BEGIN in text:
        return []
    settings, _, unreadable = read_settings(config)
    own = [n for n in DOOR_SETTINGS if n.split(".")[1] in settings.get(n.split(".")[0], {}) or n in unreadable]
    if own:
        named = ", ".join("c." + n for n in own)
        return [f"{config} sets {named} itself, so `nbgrader autograde` of this chapter does not use the hardened "
                "grader yet: add autograder.run.autograde.SandboxedExecute in place of Execute (see the block in "
                "this package's nbgrader_config.py)"]
    replace_file(config, text + ("" if text.endswith("\n") else "\n") + "\n" + doors_block())
    return [f"added to {CONFIG}: `nbgrader autograde {CHAPTER}` and formgrader's Autograde button grade this "
            "chapter through the hardened grader; other assignments keep nbgrader's own execution"]


def _refuse_if_not_ours(dest: Path) -> None:
    """A course folder another account controls (owns, may write to, or may rename away) is refused before
    anything is written: its owner could replace ``nbgrader_config.py`` before the next command runs it."""
    try:
        if os.path.lexists(dest):
            check_course(dest)
        else:                                        # the folder init makes: whoever may rename it is above
            existing = next(p for p in dest.parents if os.path.lexists(p))
            for above in [existing, *existing.parents]:
                why = problem(above, "a folder above the course", above=True)
                if why:
                    raise NotYours(why)
    except NotYours as exc:
        raise CourseExists(f"{exc}; init wrote nothing") from None


def _refuse_if_occupied(dest: Path, *, force: bool, merge: bool, assignment: str) -> None:
    if force or not dest.exists():
        return
    if not dest.is_dir():
        raise CourseExists(f"{dest} exists and is not a folder; choose another path")
    ours = [p for p in (f"source/{assignment}", f"release/{assignment}") if os.path.lexists(dest / p)]
    if merge and ours:
        raise CourseExists(f"{dest} already holds {' and '.join(ours)}: add --force to replace this "
                           "chapter's files (the config and other assignments are kept with --merge)")
    if merge or not any(dest.iterdir()):
        return
    what = "an nbgrader course (nbgrader_config.py)" if (dest / CONFIG).exists() else "files"
    raise CourseExists(f"{dest} already holds {what}. Add --merge to add {assignment} beside what is "
                       f"there (its config is kept), or --force to overwrite {CONFIG} and {assignment}; "
                       "or choose an empty folder")


def next_steps(course: Path, assignment: str = CHAPTER) -> str:
    """What an instructor runs next, for the ``init`` command's last lines: the README's semester, command by
    command, with the interpreter that runs now (the one that has this package and nbgrader), not whatever
    ``python`` or ``nbgrader`` is first on the PATH. Its folder goes first on the PATH: nbgrader makes a new
    gradebook by running ``alembic`` from the PATH (init makes the SQLite one beforehand, but not a server's),
    and on PostgreSQL the first command failed there, after removing release/, leaving tables without nbgrader's
    version stamp (tests/env/postgres/test_semester_commands.py runs every line on both gradebooks)."""
    py = shlex.quote(sys.executable)
    me, nb = f"{py} -m autograder", f"{py} -m nbgrader"
    return "\n".join([
        "Next (the README's semester, command by command):",
        f"  cd {shlex.quote(str(course))}",
        f"  export PATH={shlex.quote(str(Path(sys.executable).parent))}:\"$PATH\"   # nbgrader runs alembic from the "
        "PATH to make a new gradebook",
        f"  # add c.Exchange.root = \"/srv/nbgrader/exchange\" to {CONFIG}; students need the same root and",
        "  # course id in a config they read (e.g. /etc/jupyter/nbgrader_config.py), or fetch_assignment fails;",
        "  # a gradebook on PostgreSQL: set c.CourseDirectory.db_url = \"postgresql://...\" there now",
        f"  {nb} generate_assignment {assignment} --force   # records the assignment in gradebook.db",
        f"  {nb} release_assignment {assignment}           # or hand out release/{assignment}/*.ipynb",
        f"  {me} watch --course .                # optional: feedback on each submission",
        f"  {nb} db assignment add {assignment} --duedate=\"2026-12-01 17:00 UTC\"",
        f"  {nb} collect {assignment}                      # or copy each student's notebooks to "
        f"submitted/<student>/{assignment}/",
        f"  {me} grade --course .                # scores in gradebook.db, autograded/, feedback/, grading/",
        f"  {py} -m jupyter lab                           # Nbgrader menu > Formgrader: manual grades, comments",
        f"  {me} grade --course . --resume       # the manual work in grades.csv and the pages",
        f"  {nb} collect --update {assignment} && {me} grade --course . --resume   # resubmissions",
        f"  {nb} export                                        # its score column equals grades.csv's total",
        f"  {nb} release_feedback {assignment}             # students: nbgrader fetch_feedback",
    ])
