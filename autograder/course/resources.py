"""The course files this package carries, read only through ``importlib.resources``.

``autograder/course_files/`` holds the chapter as package data: the nbgrader config
template, ``source/`` and ``release/`` notebooks and the sample class's inputs
(``fixtures/``, the corpus of student code in ``tests/fixtures/impl/``; ``adversarial/``, the
corpus of attacks in ``tests/adversarial/``, read as text for the hostile students). In the repository
these entries are symbolic links to the top-level folders (the layout there is fixed),
so a checkout and an editable install read the very files that git tracks; building a
wheel or an sdist copies the files behind the links into the package. Either way the
code below is the only way in, and it never builds a path from this module's location.
"""
from __future__ import annotations

import shutil
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

CONFIG = "nbgrader_config.py"
CHAPTER = "ch04_attention"
SOURCE, RELEASE, FIXTURES, ATTACKS = "source", "release", "fixtures", "adversarial"


def course_files() -> Traversable:
    """The root of the packaged course (config, source/, release/, fixtures/)."""
    return resources.files("autograder").joinpath("course_files")


def config_template() -> str:
    return course_files().joinpath(CONFIG).read_text(encoding="utf-8")


def notebooks(kind: str, assignment: str = CHAPTER) -> dict[str, bytes]:
    """``kind`` (``source`` or ``release``) notebooks of the chapter: file name -> bytes."""
    folder = course_files().joinpath(kind).joinpath(assignment)
    return {f.name: f.read_bytes() for f in sorted(folder.iterdir(), key=lambda f: f.name)
            if f.name.endswith(".ipynb")}


def fixture_sources() -> dict[str, str]:
    """The sample class's inputs: fixture module name -> its code (read as text, never imported)."""
    return _python_files(FIXTURES)


def attack_sources() -> dict[str, str]:
    """The corpus of attacks: attack module name -> its text (read as text, never imported)."""
    return _python_files(ATTACKS)


def _python_files(kind: str) -> dict[str, str]:
    folder = course_files().joinpath(kind)
    return {f.name[:-3]: f.read_text(encoding="utf-8") for f in sorted(folder.iterdir(), key=lambda f: f.name)
            if f.name.endswith(".py") and not f.name.startswith("_")}


def copy_tree(node: Traversable, dest: Path) -> Path:
    """Copy a packaged folder (any Traversable) to ``dest``, file by file."""
    dest.mkdir(parents=True, exist_ok=True)
    for child in node.iterdir():
        if child.name in ("__pycache__", ".ipynb_checkpoints"):
            continue
        if child.is_dir():
            copy_tree(child, dest / child.name)
        else:
            (dest / child.name).write_bytes(child.read_bytes())
    return dest


def write_assignment(course: Path, assignment: str = CHAPTER) -> None:
    """Write the chapter's ``source/`` and ``release/`` folders into ``course`` (replacing them)."""
    for kind in (SOURCE, RELEASE):
        dest = Path(course) / kind / assignment
        if dest.exists():
            shutil.rmtree(dest)
        copy_tree(course_files().joinpath(kind).joinpath(assignment), dest)


def packaged_course() -> Path:
    """The packaged course as a folder, for code that reads a course from disk (``check`` outside a
    course). Installs are unpacked folders; a zipped install cannot be graded from."""
    root = course_files()
    if not isinstance(root, Path) or not root.joinpath(SOURCE).is_dir():
        raise RuntimeError(f"the packaged course is not a folder ({root}); reinstall attention-course "
                           "from its wheel (pip install attention-course) rather than a zip")
    return root
