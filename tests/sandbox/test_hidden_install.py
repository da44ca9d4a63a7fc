"""A system-wide install (this package below a folder student code may read, such as /usr/local/lib):
student code still cannot read the reference engine, the grader or the packaged course files."""
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from autograder.sandbox import layers, namespaces
from autograder.sandbox.limits import Limits
from autograder.sandbox.status import available, missing
from autograder.sandbox.forkclient import ForkServer
from autograder.sandbox.handle import WorkerHandle
from conftest import ROOT

SYSTEM_LIB = "/usr/local/lib"
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="mount namespaces need root")

ATTEMPTS = """
import os
LEAKS = []

def attempt(what, fn):
    try:
        if fn():
            LEAKS.append(what)
    except Exception:
        pass

def import_solutions():
    import solutions
    return getattr(solutions, '__file__', None) or [n for n in dir(solutions) if not n.startswith('__')]

def import_rubric():
    import autograder.grading.rubric
    return True

attempt('open solutions', lambda: open({init!r}).read())
attempt('list solutions', lambda: os.listdir({solutions!r}))
attempt('list autograder', lambda: os.listdir({autograder!r}))
attempt('list course files', lambda: os.listdir({course!r}))
attempt('open a source notebook', lambda: open({notebook!r}).read())
attempt('import solutions', import_solutions)
attempt('import solutions.attention', lambda: __import__('solutions.attention'))
attempt('import autograder.grading.rubric', import_rubric)
import autograder
print('|'.join(LEAKS) or 'none', autograder.__file__, sep='\\n')

def twice(x):
    return 2 * x
"""


@pytest.fixture(scope="module")
def system_site():
    """This package copied into a site-packages folder below /usr/local/lib (the course files'
    links followed, as in a wheel): what `pip install` into a system Python gives."""
    if os.geteuid() != 0 or not os.access(SYSTEM_LIB, os.W_OK):
        pytest.skip("needs root to write below /usr/local/lib")
    base = tempfile.mkdtemp(prefix="autograder-test-", dir=SYSTEM_LIB)
    try:
        os.chmod(base, 0o755)
        site = Path(base) / "python3" / "site-packages"
        for name in ("solutions", "autograder"):
            shutil.copytree(ROOT / name, site / name, ignore=shutil.ignore_patterns("__pycache__"))
        yield site
    finally:
        shutil.rmtree(base, ignore_errors=True)


@ROOT_ONLY
def test_a_system_wide_install_stays_hidden_from_student_code(system_site):
    assert any(system_site.as_posix().startswith(p) for p in layers.SYSTEM_READ), "below an allowed folder"
    paths = {"init": system_site / "solutions/__init__.py", "solutions": system_site / "solutions",
             "autograder": system_site / "autograder", "course": system_site / "autograder/course_files",
             "notebook": system_site / "autograder/course_files/source/ch04_attention/ex1_attention.ipynb"}
    assert all(p.exists() for p in paths.values())
    server = ForkServer(python_path=str(system_site))
    try:
        handle = WorkerHandle(server, Limits())
        try:
            reply = handle.run_cell(ATTEMPTS.format(**{k: str(v) for k, v in paths.items()}), 30)
            assert reply["ok"], reply
            out, _ = handle.request({"op": "output"}, 5)
            reply, results = handle.call_many("twice", [((np.arange(3.0),), {})], 10)
        finally:
            handle.cleanup()
    finally:
        server.close()
    leaks, imported_from = out["stdout"].split("\n")[:2]
    assert imported_from.startswith(str(system_site)), "the worker runs the system-wide copy"
    assert leaks == "none", leaks
    hidden = handle.status["this package hidden"]
    assert hidden.startswith("applied (") and "(0 " not in hidden, hidden       # the mount, not only Landlock
    assert np.array_equal(results[0][1], [0.0, 2.0, 4.0]), results  # the worker still serves calls


def test_the_allowlist_lists_an_allowed_folder_entry_by_entry_around_a_hidden_one(tmp_path):
    lib = tmp_path / "lib"
    site = lib / "python3" / "site-packages"
    for name in ("solutions", "numpy"):
        (site / name).mkdir(parents=True)
    (lib / "other").mkdir()
    (tmp_path / "merged").symlink_to(lib)                         # /lib -> /usr/lib on merged-usr systems
    hidden = (str(site / "solutions"),)
    expected = {str(lib / "other"), str(site / "numpy")}
    assert layers._without({str(lib)}, hidden) == expected
    assert layers._without({str(tmp_path / "merged")}, hidden) == expected
    assert layers._without({str(site / "solutions"), str(lib / "other")}, hidden) == {str(lib / "other")}


def test_hidden_dirs_are_this_package_and_its_course_files():
    hidden = layers.hidden_dirs()
    for name in ("solutions", "autograder"):
        assert str((ROOT / name).resolve()) in hidden, name
    assert str((ROOT / "autograder/course_files/source").resolve()) in hidden
    assert not any(h == os.path.realpath(os.sys.prefix) for h in hidden)


@ROOT_ONLY
def test_hide_covers_a_folder_in_this_mount_namespace_only(tmp_path):
    secret, other = tmp_path / "pkg", tmp_path / "course"
    for folder in (secret, other):
        folder.mkdir()
        (folder / "answer.py").write_text("ANSWER = 42\n")
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            assert str(namespaces.enter()["mount namespace"]) == "applied"
            assert namespaces.hide([str(secret), str(other)]) == [str(secret), str(other)]
            assert os.listdir(secret) == os.listdir(other) == [] and not (other / "answer.py").exists()
            try:
                (other / "x").write_text("x")                     # the bound copy, too
            except OSError:
                code = 0                                          # read-only
        finally:
            os._exit(code)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert (secret / "answer.py").read_text() == (other / "answer.py").read_text() == "ANSWER = 42\n"


def test_doctor_says_when_only_landlock_hides_the_package(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(layers, "_userns", lambda: missing("no unprivileged user namespaces here"))
    line = str(layers.detect()["this package hidden"])
    assert line.startswith("missing") and "only by Landlock's allowlist" in line, line
    monkeypatch.setattr(layers, "_userns", lambda: available("in a user namespace"))
    line = str(layers.detect()["this package hidden"])
    assert line == "available (in a user namespace)"
