"""`init --merge` into a course folder holding hostile files and links (issue 19, item 7c).

The folder is the instructor's: init never writes through a link, never replaces what is not
its own, never blocks on a FIFO, and says what it skipped. Each case runs in a child process
with a timeout, so a blocking open fails the test instead of hanging it.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CONFIG = "c = get_config()\nc.CourseDirectory.course_id = 'ml101'\n"


def _init(course: Path, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", "init", str(course), *flags],
                          capture_output=True, text=True, timeout=60)


def _snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder`` (links as their target, files as their bytes)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        out[rel] = ("link:" + os.readlink(path)) if path.is_symlink() else (
            path.read_bytes() if path.is_file() else "dir")
    return out


@pytest.fixture
def outside(tmp_path):
    """A folder beside the course that init must never touch."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "config.py").write_text("# someone else's file\n")
    (folder / "notes").mkdir()
    return folder


@pytest.fixture
def course(tmp_path):
    folder = tmp_path / "course"
    (folder / "source/week1").mkdir(parents=True)
    (folder / "source/week1/intro.ipynb").write_text("{}")
    return folder


def _check_untouched(outside: Path, before: dict, run: subprocess.CompletedProcess) -> None:
    assert _snapshot(outside) == before, "init wrote through a link into a folder outside the course"
    assert "Traceback" not in run.stderr, run.stderr


def test_config_linked_elsewhere_is_not_appended_to(course, outside):
    (course / "nbgrader_config.py").symlink_to(outside / "config.py")
    before = _snapshot(outside)
    run = _init(course, "--merge")
    _check_untouched(outside, before, run)
    assert run.returncode == 0 and "nbgrader_config.py" in run.stdout and "link" in run.stdout
    assert (course / "nbgrader_config.py").is_symlink()


def test_dangling_config_link_is_not_written_through(course, outside):
    (course / "nbgrader_config.py").symlink_to(outside / "new_config.py")
    before = _snapshot(outside)
    run = _init(course, "--merge")
    _check_untouched(outside, before, run)
    assert not (outside / "new_config.py").exists()
    assert "link" in run.stdout + run.stderr


@pytest.mark.parametrize("kind", ["source", "release"])
def test_notebook_folder_linked_elsewhere_is_not_written_into(tmp_path, outside, kind):
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text(CONFIG)
    (course / kind).symlink_to(outside / "notes")
    before = _snapshot(outside)
    run = _init(course, "--merge")
    _check_untouched(outside, before, run)
    assert f"{kind}/" in run.stdout + run.stderr and "link" in run.stdout + run.stderr
    assert (course / "nbgrader_config.py").read_text().startswith(CONFIG)


def test_chapter_folder_as_a_link_is_not_removed_or_followed_with_force(course, outside):
    (course / "nbgrader_config.py").write_text(CONFIG)
    (course / "source/ch04_attention").symlink_to(outside / "notes")
    (outside / "notes" / "keep.ipynb").write_text("{}")
    before = _snapshot(outside)
    run = _init(course, "--merge", "--force")
    _check_untouched(outside, before, run)
    assert "source/ch04_attention" in run.stdout + run.stderr


def test_dangling_chapter_link_is_reported_not_a_traceback(course, outside):
    (course / "nbgrader_config.py").write_text(CONFIG)
    (course / "release").mkdir()
    (course / "release/ch04_attention").symlink_to(outside / "gone")
    before = _snapshot(outside)
    run = _init(course, "--merge")
    _check_untouched(outside, before, run)
    assert not (outside / "gone").exists()
    assert "release/ch04_attention" in run.stdout + run.stderr


def test_config_fifo_does_not_block_init(course):
    os.mkfifo(course / "nbgrader_config.py")
    run = _init(course, "--merge")                         # a blocking open would time out here
    assert "Traceback" not in run.stderr, run.stderr
    assert "nbgrader_config.py" in run.stdout + run.stderr
    assert not (course / "nbgrader_config.py").is_file()    # the FIFO is left as it is


def test_config_that_is_a_folder_is_reported(course):
    (course / "nbgrader_config.py").mkdir()
    run = _init(course, "--merge")
    assert "Traceback" not in run.stderr, run.stderr
    assert "nbgrader_config.py" in run.stdout + run.stderr
    assert (course / "nbgrader_config.py").is_dir() and not any((course / "nbgrader_config.py").iterdir())


def test_submitted_that_is_a_file_is_kept(course):
    (course / "nbgrader_config.py").write_text(CONFIG)
    (course / "submitted").write_text("mine")
    run = _init(course, "--merge")
    assert "Traceback" not in run.stderr, run.stderr
    assert (course / "submitted").read_text() == "mine" and "submitted" in run.stdout + run.stderr


def test_other_instructor_files_and_links_are_left_alone(course, outside):
    (course / "nbgrader_config.py").write_text(CONFIG + "c.Exchange.root = '/srv/' + 'exchange'\n")
    (course / "late.py").symlink_to(outside / "config.py")
    (course / "gradebook.db").symlink_to(outside / "notes")
    os.mkfifo(course / "pipe")
    (course / "submitted").symlink_to(outside / "notes")
    before = _snapshot(outside)
    run = _init(course, "--merge")
    _check_untouched(outside, before, run)
    assert run.returncode == 0
    text = (course / "nbgrader_config.py").read_text()
    assert text.startswith(CONFIG + "c.Exchange.root = '/srv/' + 'exchange'\n")
    assert "SandboxedExecute" in text and (course / "late.py").is_symlink()


def test_computed_autograde_steps_are_the_instructor_s(course):
    config = CONFIG + "c.Autograde.autograde_preprocessors = steps()\n"
    (course / "nbgrader_config.py").write_text(config)
    run = _init(course, "--merge")
    assert run.returncode == 0 and (course / "nbgrader_config.py").read_text() == config
    assert "SandboxedExecute in place of Execute" in run.stdout


def test_merge_replaces_the_config_whole_and_keeps_its_mode(course):
    config = course / "nbgrader_config.py"
    config.write_text(CONFIG)
    config.chmod(0o640)
    hard = course.parent / "hardlink_of_config.py"
    os.link(config, hard)                     # a hard link elsewhere keeps the old bytes: not written through
    run = _init(course, "--merge")
    assert run.returncode == 0, run.stderr
    assert "SandboxedExecute" in config.read_text() and hard.read_text() == CONFIG
    assert (config.stat().st_mode & 0o777) == 0o640
