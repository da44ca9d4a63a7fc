"""A stop signal arriving while outputs are written (issue 19, item 7b).

The grader runs in a child process whose ``durable.atomic_write`` sends the run a signal just before its
N-th rename onto a chosen output (records, autograded notebooks, nbgrader's feedback pages,
grades.csv, report.html, results.json, our feedback pages): the worst moment, a new file complete
beside the old. Whatever the run leaves must be whole (no partial file, no folder holding part of a
student's notebooks or pages), and the ``--resume`` command it prints must finish the job with the
scores of a clean run.
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from batch_helpers import make_class, read_csv


STUDENTS = ["correct-1", "no-scaling"]
NOTEBOOKS = {"ex1_attention", "ex2_causal_mask", "ex3_memory", "ex4_cross_attention"}

# Run the grader with os.replace of atomic_write signalling the run before the N-th rename onto a path
# holding PATTERN, in the run or in a grading process it forked (the handler raises Stop at the next
# bytecode, so the run's rename does not happen).
STOPPER = """
import os, runpy, signal, sys
import autograder.durable as durable
pattern, nth, signum = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
RUN = os.getpid()               # the run: a grading process it forks (autograded notebooks) signals it, not itself
class Os:
    seen = 0
    def __getattr__(self, name):
        return getattr(os, name)
    def replace(self, src, dst):
        if pattern in str(dst):
            Os.seen += 1
            if Os.seen == nth:
                os.kill(RUN, signum)
        return os.replace(src, dst)
durable.os = Os()
sys.argv = ["autograder", *sys.argv[4:]]
runpy.run_module("autograder", run_name="__main__")
"""


def _grade(course: Path, *extra: str, stop=None) -> subprocess.CompletedProcess:
    args = ["grade", "--course", str(course), "--workers", "1", *extra]
    command = [sys.executable, "-c", STOPPER, *map(str, stop), *args] if stop else \
        [sys.executable, "-m", "autograder", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, start_new_session=True)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    course = _class(tmp_path_factory.mktemp("clean"))
    run = _grade(course)
    assert run.returncode == 0, run.stderr
    return _scores(course)


def _class(tmp: Path) -> Path:
    """The class, each submission with a secret of its own and a time (as nbgrader submit leaves it)."""
    course = make_class(tmp, STUDENTS)
    for n, student in enumerate(STUDENTS):
        folder = course / "submitted" / student / "ch04_attention"
        (folder / "submission_secret.txt").write_text(f"{n:032x}")
        (folder / "timestamp.txt").write_text("2026-03-01 10:00:00.000000 UTC")
    return course


def _scores(course: Path) -> dict[str, str]:
    return {row["student_id"]: row["total"] for row in read_csv(course / "grading" / "grades.csv")}


def _assert_whole(course: Path) -> None:
    """No partial file; every JSON parses; a student's autograded or feedback folder is all or nothing."""
    partial = [str(p) for p in course.rglob("*") if p.name.startswith(".partial-")]
    assert not partial, f"half-written files left behind: {partial}"
    for path in [*course.rglob("*.json"), *course.rglob("*.ipynb")]:
        json.loads(path.read_text())
    for student in STUDENTS:
        # both hold the submission's own secret, as nbgrader's autograde and generate_feedback leave them
        for top, suffix, extra in (("autograded", ".ipynb", {"timestamp.txt", "submission_secret.txt"}),
                                   ("feedback", ".html", {"timestamp.txt", "submission_secret.txt"})):
            folder = course / top / student / "ch04_attention"
            if folder.exists():
                names = {p.name for p in folder.iterdir()}
                assert names == {n + suffix for n in NOTEBOOKS} | extra, (folder, names)


@pytest.mark.parametrize("pattern, nth", [
    ("records", 1), ("autograded", 2), ("autograded", 5), ("course/feedback/correct-1/", 3),
    ("grades.csv", 1), ("results.json", 1), ("index.html", 2), ("report.html", 1)])
@pytest.mark.parametrize("sig", [signal.SIGTERM])
def test_a_stop_while_writing_leaves_whole_outputs_and_resume_finishes(tmp_path, reference, pattern, nth, sig):
    course = _class(tmp_path)
    stopped = _grade(course, stop=(pattern, nth, int(sig)))
    assert stopped.returncode == 128 + sig, stopped.stdout + stopped.stderr
    assert "Traceback" not in stopped.stderr and "--resume" in stopped.stderr, stopped.stderr
    _assert_whole(course)
    resume = stopped.stderr.strip().splitlines()[-1].split()
    assert resume[-1] == "--resume"
    finished = subprocess.run(resume, capture_output=True, text=True, timeout=300, start_new_session=True)
    assert finished.returncode == 0, finished.stderr
    _assert_whole(course)
    assert _scores(course) == reference
    for student in STUDENTS:
        assert (course / "autograded" / student / "ch04_attention" / "timestamp.txt").exists()
        assert (course / "feedback" / student / "ch04_attention" / "ex4_cross_attention.html").exists()
