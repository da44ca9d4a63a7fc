"""The course around a submission: where it is, its nbgrader settings, its assignments, whose work it is.

nbgrader executes ``nbgrader_config.py``; the grader only reads it. Plain assignments
``c.Section.name = <literal>`` are taken as settings; any other statement is left to
nbgrader. A setting that decides where submissions are read or scores and feedback
written must be plain (``unusable_settings`` says which is not, and ``grade`` stops).
"""
from __future__ import annotations

import ast
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .owner import CONFIG, check_course
from .resources import packaged_course

DEFAULT_COURSE_ID = "attention-course"
DEFAULT_ASSIGNMENT = "ch04_attention"     # the bundled chapter: seeds of work graded outside a course
MAX_CONFIG_BYTES = 1 << 20


@dataclass(frozen=True)
class Course:
    root: Path
    course_id: str
    db_url: str                                   # absolute for sqlite, as nbgrader resolves it
    settings: dict = field(default_factory=dict)  # section -> {name: literal value}
    notes: tuple[str, ...] = ()
    unreadable: tuple[str, ...] = ()              # "Section.name" set to something other than a plain value

    def setting(self, section: str, name: str, default=None):
        return self.settings.get(section, {}).get(name, default)


def load_course(root) -> Course:
    """The course at ``root`` with the settings of its nbgrader_config.py (defaults where absent). Every
    command reads its course here, so here the course is checked to be the running account's alone
    (``owner.check_course``: ``owner.NotYours``, one line, for a folder or file another account controls)."""
    root = Path(root).resolve()
    check_course(root)                               # before its settings are read: NotYours if not the runner's
    settings, notes, unreadable = read_settings(root / CONFIG)
    course_id = settings.get("CourseDirectory", {}).get("course_id")
    if not isinstance(course_id, str) or not course_id:
        notes.append(f"{root / CONFIG} sets no plain c.CourseDirectory.course_id; using '{DEFAULT_COURSE_ID}'")
        course_id = DEFAULT_COURSE_ID
    db_url = settings.get("CourseDirectory", {}).get("db_url")
    if db_url is not None and not isinstance(db_url, str):
        notes.append(f"c.CourseDirectory.db_url in {root / CONFIG} is not a string; using the default gradebook")
        db_url = None
    db_url = resolve_db_url(db_url, root)
    check_course(root, db_url)                       # and its gradebook, now that the settings say where it is
    return Course(root, course_id, db_url, settings, tuple(notes), tuple(unreadable))


# Folders the grader reads in nbgrader's layout: it uses these names, whatever the config says.
FIXED_FOLDERS = {"source_directory": "source", "release_directory": "release", "submitted_directory": "submitted"}
# Settings the grader reads from the config: where nbgrader's gradebook and feedback are, whose course it is.
READ_SETTINGS = ("course_id", "db_url", "feedback_directory")


def unusable_settings(course: Course, *, gradebook_given: bool = False) -> list[str]:
    """Why the grader would read submissions or write scores elsewhere than nbgrader does, one line per
    setting: a path setting that is computed (the grader never runs the config), or a folder other than
    the one the grader reads. Empty when the grader and nbgrader agree."""
    config = course.root / CONFIG
    problems = []
    for name in ("root", *FIXED_FOLDERS, *READ_SETTINGS):
        if name == "db_url" and gradebook_given:
            continue                                      # --gradebook decides where scores go
        if f"CourseDirectory.{name}" in course.unreadable:
            other = {"db_url": ", or pass --gradebook URL", "root": ", or drop it and pass --course"}.get(name, "")
            problems.append(f"c.CourseDirectory.{name} in {config} is computed, not a plain value, and the grader "
                            "reads the config without running it, so it cannot tell where nbgrader looks: make it "
                            f"a plain string in {CONFIG}{other}")
    for name, folder in FIXED_FOLDERS.items():
        value = course.setting("CourseDirectory", name, folder)
        if isinstance(value, str) and value != folder:
            problems.append(f"c.CourseDirectory.{name} in {config} is {value!r}, but the grader reads "
                            f"{course.root / folder}: use nbgrader's default {folder!r} (move the folder there)")
    root = course.setting("CourseDirectory", "root")
    if isinstance(root, str) and Path(course.root, root).resolve() != course.root:
        problems.append(f"c.CourseDirectory.root in {config} is {root!r}, not this course folder: run the grader "
                        f"with --course {root}, or drop the setting")
    return problems


def read_settings(path: Path) -> tuple[dict, list[str], list[str]]:
    """``{section: {name: value}}`` from the plain ``c.Section.name = literal`` lines of a config file,
    notes on what could not be read, and the names set to something else."""
    try:
        text = read_plain_file(path, MAX_CONFIG_BYTES + 1)
        if len(text) > MAX_CONFIG_BYTES:
            return {}, [f"{path} is larger than {MAX_CONFIG_BYTES} bytes; using nbgrader's defaults"], []
        tree = ast.parse(text.decode("utf-8-sig"), filename=str(path))
    except FileNotFoundError:
        return {}, [f"no {CONFIG} in {Path(path).parent}; using nbgrader's defaults"], []
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as exc:
        return {}, [f"could not read {path} ({exc}); using nbgrader's defaults"], []
    settings: dict = {}
    notes: list[str] = []
    unreadable: list[str] = []
    for node in tree.body:
        _take_assignment(node, settings, notes, unreadable)
    return settings, notes, unreadable


def read_plain_file(path: Path, limit: int = MAX_CONFIG_BYTES + 1) -> bytes:
    """Up to ``limit`` bytes of a regular file; a FIFO, device or folder is an OSError, never a blocked read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a plain file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(limit)
    finally:
        os.close(fd)


def _take_assignment(node, settings: dict, notes: list[str], unreadable: list[str]) -> None:
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return
    target = node.targets[0]
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute)
            and isinstance(target.value.value, ast.Name) and target.value.value.id == "c"):
        return
    section, name = target.value.attr, target.attr
    try:
        settings.setdefault(section, {})[name] = ast.literal_eval(node.value)
    except (ValueError, TypeError, RecursionError):
        unreadable.append(f"{section}.{name}")
        notes.append(f"line {node.lineno}: c.{section}.{name} is not a plain value; "
                     "the grader ignores it (nbgrader still reads it)")


def resolve_db_url(db_url: str | None, root: Path) -> str:
    """nbgrader's gradebook URL for the course: a relative sqlite path is taken from the course
    folder (where nbgrader's commands run); no URL means ``<course>/gradebook.db``."""
    if not db_url:
        return f"sqlite:///{Path(root).resolve() / 'gradebook.db'}"
    prefix = "sqlite:///"
    if db_url.startswith(prefix) and not db_url[len(prefix):].startswith("/") and db_url != prefix:
        return prefix + str(Path(root).resolve() / db_url[len(prefix):])
    return db_url


def default_course(cwd: Path | None = None) -> Path:
    """The course a command given no ``--course`` works on, as nbgrader's commands find it: the first
    ``c.CourseDirectory.root`` among the nbgrader_config.py files nbgrader reads (the working folder's, then
    the user's Jupyter config folder's, ``~/.jupyter`` on a Hub, then the system's), else the working folder.
    On the README's Hub the instructor's home names the course so, and the grader ignored it."""
    cwd = Path(os.path.abspath(cwd or os.getcwd()))
    for folder in nbgrader_config_dirs(cwd):
        root = read_settings(folder / CONFIG)[0].get("CourseDirectory", {}).get("root")
        if isinstance(root, str) and root:
            return Path(os.path.abspath(cwd / os.path.expanduser(root)))
    return cwd


def nbgrader_config_dirs(cwd: Path) -> list[Path]:
    """The folders whose nbgrader_config.py nbgrader reads, the one that wins first."""
    from jupyter_core.paths import jupyter_config_dir, jupyter_config_path
    found = []
    for folder in (str(cwd), jupyter_config_dir(), *jupyter_config_path()):
        if Path(folder) not in found:
            found.append(Path(folder))
    return found


def find_course(start: Path) -> Path:
    """The nearest folder above ``start`` holding nbgrader_config.py and source/, else the packaged course."""
    start = Path(os.path.abspath(start))        # not resolved: a link in a submission is not followed
    for folder in [start, *start.parents]:
        if (folder / CONFIG).exists() and (folder / "source").is_dir():
            return folder
    return packaged_course()


def assignments(root: Path) -> list[str]:
    """The assignments of the course: folders of source/ holding notebooks, else those of submitted/*/."""
    root = Path(root)
    found = {p.parent.name for p in (root / "source").glob("*/*.ipynb")}
    if not found:
        found = {p.name for p in (root / "submitted").glob("*/*") if p.is_dir()}
    return sorted(found)


def init_command(root, merge: bool = False) -> str:
    """The command that lays out this chapter's course files in ``root`` (for messages)."""
    import shlex
    import sys
    return f"`{shlex.quote(sys.executable)} -m autograder init {shlex.quote(str(root))}{' --merge' if merge else ''}`"


def choose_assignment(root: Path, given: str | None = None) -> str:
    """``given``, else the course's only assignment; a clear error when there are several or none."""
    if not Path(root).is_dir():
        raise ValueError(f"{root} is not a folder: give the course folder with --course, or create one "
                         f"with {init_command(root)}")
    if given:
        if Path(given).name != given or given in (".", ".."):
            raise ValueError(f"--assignment must be a plain folder name, got {given!r}")
        known = sorted({*assignments(root), *(p.name for p in (Path(root) / "submitted").glob("*/*") if p.is_dir())})
        if known and given not in known:
            raise ValueError(f"--assignment {given}: the course {root} has no such assignment (in source/ or "
                             f"submitted/<student>/); its assignments: {', '.join(known[:10])}")
        return given
    found = assignments(root)
    if len(found) == 1:
        return found[0]
    if not found and not (Path(root) / CONFIG).is_file():
        raise ValueError(f"{root} is not a course folder (it has no {CONFIG}): give the course folder with --course "
                         "(or name it as nbgrader reads it, c.CourseDirectory.root in ~/.jupyter/nbgrader_config.py), "
                         f"or make a course in a folder of its own with {init_command('COURSE')}")
    if not found:
        raise ValueError(f"no assignment found: {Path(root) / 'source'}/<assignment>/ holds no notebooks and "
                         f"{Path(root) / 'submitted'}/<student>/ no folders; check --course, or add this "
                         f"chapter with {init_command(root, merge=True)}")
    raise ValueError(f"the course holds {len(found)} assignments ({', '.join(found)}): "
                     "choose one with --assignment")


def infer_student(path: Path, assignment: str) -> str:
    """The student of a submission in nbgrader's layout (``submitted/<student>/<assignment>``)."""
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    if folder.name == assignment and folder.parent.name:
        return folder.parent.name
    return "anonymous"


def infer_assignment(path: Path, course: Path) -> str:
    """The assignment of a submission path: its folder in nbgrader's layout, else the course's only one."""
    path = Path(os.path.abspath(path))
    folder = path if path.is_dir() else path.parent
    if folder.parent.parent.name in ("submitted", "autograded") or folder.name in assignments(course):
        return folder.name
    return choose_assignment(course)
