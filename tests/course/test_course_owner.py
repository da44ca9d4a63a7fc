"""Every folder and file the grader trusts is the running account's alone (issue 35, item 6): ``init`` once took a
folder another account controlled, which then replaced ``nbgrader_config.py``, so the next command ``init``
printed ran her code as the instructor (root). Now the course is checked where every command reads it
(``course.settings.load_course``) and before ``init`` writes: a folder or file owned by another account, or
writable by a group with another member or by everyone, is refused with one line naming the path and the owner.
With a real other account (tests/helpers/hub_accounts.py) and group/world-writable modes, for init and for grade,
check and watch."""
from __future__ import annotations

import grp
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.course.owner import NotYours, check_course, problem
from hub_accounts import Accounts

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="making a real other account needs root")


@pytest.fixture(scope="module")
def mallory(tmp_path_factory):
    """A real account of this machine (and its private group), removed after the tests."""
    accounts = Accounts(["mal"], tmp_path_factory.mktemp("homes"))
    accounts.create()
    try:
        name = accounts["mal"]
        yield name, accounts.uid(name), grp.getgrnam(name).gr_gid
    finally:
        accounts.remove()


def _run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd)


@pytest.fixture(scope="module")
def laid_out(tmp_path_factory):
    """A course init laid out (as root, the account running these tests), to copy for each case."""
    base = tmp_path_factory.mktemp("laid")
    done = _run("init", str(base / "course"))
    assert done.returncode == 0, done.stderr
    return base / "course"


def _refused(done: subprocess.CompletedProcess, path: Path, words: str) -> None:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode != 0 and len(lines) == 1, done.stderr
    assert str(path) in lines[0] and words in lines[0], lines[0]
    assert "Traceback" not in done.stderr


# --- init ---------------------------------------------------------------------------------------

def test_init_refuses_an_empty_folder_another_account_owns(tmp_path, mallory):
    mal, uid, gid = mallory
    dest = tmp_path / "course"
    dest.mkdir()
    os.chown(dest, uid, gid)
    done = _run("init", str(dest))
    _refused(done, dest, f"belongs to {mal}")
    assert list(dest.iterdir()) == [] and "init wrote nothing" in done.stderr


def test_init_refuses_a_folder_inside_one_another_account_owns(tmp_path, mallory):
    """She could rename the course folder away and put hers in its place."""
    mal, uid, gid = mallory
    hers = tmp_path / "hers"
    hers.mkdir()
    os.chown(hers, uid, gid)
    _refused(_run("init", str(hers / "course")), hers, f"belongs to {mal}")
    assert not (hers / "course").exists()


@pytest.mark.parametrize("mode, refused", [(0o777, True), (0o775, True), (0o1777, False), (0o755, False)])
def test_init_below_a_folder_others_may_write(tmp_path, mallory, mode, refused):
    """Writable by all (or a group she is in) without the sticky bit: she may rename the course away; with it (as
    /tmp), she may not."""
    mal, uid, gid = mallory
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chown(shared, 0, gid)                              # her group, for the group-writable case
    shared.chmod(mode)
    done = _run("init", str(shared / "course"))
    if refused:
        _refused(done, shared, "can be written by")
    else:
        assert done.returncode == 0, done.stderr
        assert (shared / "course" / "nbgrader_config.py").stat().st_uid == 0


def test_init_merge_refuses_a_config_another_account_owns(tmp_path, mallory, laid_out):
    mal, uid, gid = mallory
    course = tmp_path / "course"
    shutil.copytree(laid_out, course, symlinks=True)
    shutil.rmtree(course / "source" / "ch04_attention")
    shutil.rmtree(course / "release" / "ch04_attention")
    os.chown(course / "nbgrader_config.py", uid, gid)
    before = (course / "nbgrader_config.py").read_bytes()
    _refused(_run("init", str(course), "--merge"), course / "nbgrader_config.py", f"belongs to {mal}")
    assert (course / "nbgrader_config.py").read_bytes() == before


# --- grade, check and watch: one place, every command ---------------------------------------------

def _hers(path: Path, uid: int, gid: int) -> None:
    os.chown(path, uid, gid)


CASES = {   # what is changed -> (the path the line names, its words)
    "course folder hers": (lambda c, u, g: _hers(c, u, g), ".", "belongs to"),
    "config hers": (lambda c, u, g: _hers(c / "nbgrader_config.py", u, g), "nbgrader_config.py", "belongs to"),
    "config writable by all": (lambda c, u, g: (c / "nbgrader_config.py").chmod(0o666), "nbgrader_config.py",
                               "can be written by everyone"),
    "course writable by all, sticky": (lambda c, u, g: c.chmod(0o1777), ".", "can be written by everyone"),
    "source group-writable, her group": (lambda c, u, g: (os.chown(c / "source/ch04_attention", 0, g),
                                                          (c / "source/ch04_attention").chmod(0o775)),
                                         "source/ch04_attention", "can be written by the group"),
    "a hidden test writable by all": (lambda c, u, g: (c / "source/ch04_attention/ex1_attention.ipynb").chmod(0o646),
                                      "source/ch04_attention/ex1_attention.ipynb", "everyone"),
    "gradebook hers": (lambda c, u, g: _hers(c / "gradebook.db", u, g), "gradebook.db", "belongs to"),
    "outputs writable by all": (lambda c, u, g: ((c / "grading").mkdir(), (c / "grading").chmod(0o777)), "grading",
                                "can be written by everyone"),
    "a plugin module hers": (lambda c, u, g: ((c / "late.py").write_text("x = 1\n"), _hers(c / "late.py", u, g)),
                             "late.py", "belongs to"),
    "a folder above writable by all": (lambda c, u, g: c.parent.chmod(0o777), "..", "can be written by everyone"),
}


@pytest.mark.parametrize("case", CASES)
def test_grade_check_and_watch_refuse_a_course_another_account_controls(case, tmp_path, mallory, laid_out):
    mal, uid, gid = mallory
    course = tmp_path / "place" / "course"
    shutil.copytree(laid_out, course, symlinks=True)
    change, named, words = CASES[case]
    change(course, uid, gid)
    path = (course / named).resolve() if named != "." else course
    submission = course / "submitted" / "ann" / "ch04_attention"
    shutil.copytree(course / "release" / "ch04_attention", submission)
    for command in (["grade", "--course", str(course)], ["check", str(submission), "--course", str(course)],
                    ["watch", "--course", str(course)]):
        done = _run(*command)
        _refused(done, path, words)
        if words == "belongs to":
            assert mal in done.stderr
    assert not (course / "grading" / "grades.csv").exists()


def test_the_course_as_laid_out_is_trusted_and_a_private_group_may_write(tmp_path, laid_out):
    """The owner's own group (no other member, no one's primary group) writing is the owner writing."""
    course = tmp_path / "course"
    shutil.copytree(laid_out, course, symlinks=True)
    check_course(course, f"sqlite:///{course / 'gradebook.db'}")
    group = f"solo{os.getpid() % 100000}"
    subprocess.run(["groupadd", group], check=True, timeout=30)
    try:
        os.chown(course, 0, grp.getgrnam(group).gr_gid)
        course.chmod(0o775)
        assert problem(course, "the course folder") is None
        with pytest.raises(NotYours, match="can be written by everyone"):
            course.chmod(0o777)
            check_course(course)
    finally:
        course.chmod(0o755)
        subprocess.run(["groupdel", group], timeout=30, check=False)
