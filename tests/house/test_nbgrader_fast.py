"""The tests' nbgrader runner (tests/helpers/nbgrader_fast.py) behaves as ``python -m nbgrader``: the same
status and output, the command's folder first on sys.path (a course's late-penalty plugin imports from
it), its environment, a new gradebook stamped with the same alembic head, and a command past its time
ended with everything it started."""
import sqlite3
import subprocess
import sys
import time

import pytest

from autograder.course.nbgrader_cli import tool_env
from nbgrader_fast import _ZYGOTE_PROCESS, nbgrader, run_nbgrader

CONFIG = ("import os, plugin_here\nc = get_config()\nc.CourseDirectory.course_id = os.environ['COURSE_FOR_TEST']\n"
          "c.CourseDirectory.db_url = 'sqlite:///gradebook.db'\n")


def _plain(args, cwd):
    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=tool_env(), capture_output=True,
                          text=True, timeout=120)


def test_the_runner_is_the_forked_helper_here():
    run_nbgrader(["--version"], ".", "version")
    assert not _ZYGOTE_PROCESS.failed and _ZYGOTE_PROCESS.proc.poll() is None


@pytest.mark.parametrize("args", [["--version"], ["nonsense"], ["generate_assignment", "missing", "--log-level=WARN"]],
                         ids=["version", "unknown", "fails"])
def test_status_and_output_are_those_of_python_m_nbgrader(tmp_path, args):
    forked, plain = nbgrader(args, tmp_path, timeout=120), _plain(args, tmp_path)
    assert forked.returncode == plain.returncode
    assert forked.stdout == plain.stdout and forked.stderr.splitlines()[-1:] == plain.stderr.splitlines()[-1:]


def test_the_commands_folder_and_environment_are_its_own(tmp_path, monkeypatch):
    (tmp_path / "plugin_here.py").write_text("")
    (tmp_path / "nbgrader_config.py").write_text(CONFIG)
    monkeypatch.setenv("COURSE_FOR_TEST", "course-from-env")
    run_nbgrader(["db", "student", "add", "ada", "--log-level=WARN"], tmp_path, "db student add")
    with sqlite3.connect(tmp_path / "gradebook.db") as db:
        assert db.execute("SELECT id FROM student").fetchall() == [("ada",)]
        forked_head = db.execute("SELECT version_num FROM alembic_version").fetchall()
    other = tmp_path / "plain"
    other.mkdir()
    for name in ("plugin_here.py", "nbgrader_config.py"):
        (other / name).write_text((tmp_path / name).read_text())
    assert _plain(["db", "student", "add", "bob", "--log-level=WARN"], other).returncode == 0
    with sqlite3.connect(other / "gradebook.db") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == forked_head


def test_a_command_past_its_time_is_ended_with_what_it_started(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("import subprocess, time\nsubprocess.Popen(['sleep', '297'])\n"
                                                 "time.sleep(300)\n")
    start = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        nbgrader(["db", "student", "list"], tmp_path, timeout=3)     # it reads the config
    assert time.monotonic() - start < 30
    left = subprocess.run(["pgrep", "-f", "^sleep 297$"], capture_output=True, text=True).stdout.split()
    assert left == []
    assert run_nbgrader(["--version"], tmp_path.parent, "version").returncode == 0     # the helper serves on
