"""The command line is thin: it parses arguments and calls the API."""
import io
import json
import subprocess
import sys

from autograder.run.progress import Progress
from autograder.samples.synthetic import write_submission
from conftest import RELEASE, ROOT, SOURCE


def _run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "autograder", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def test_check_prints_a_table_and_json(tmp_path):
    folder = write_submission(RELEASE, SOURCE, tmp_path / "submitted" / "zoe" / "ch04_attention",
                              {"causal_mask": "def causal_mask(n):\n    return np.triu(np.full((n, n), -np.inf))\n"})
    table = _run("check", str(folder), "--course", str(ROOT))
    assert table.returncode == 0, table.stderr
    assert "FAIL" in table.stdout and "[diagonal-masked]" in table.stdout and "total 22/28" in table.stdout
    record = json.loads(_run("check", str(folder / "ex2_causal_mask.ipynb"), "--json", "--course", str(ROOT)).stdout)
    assert record["student_id"] == "zoe" and record["max_total"] == 9 and record["total"] == 3
    assert {c["grade_id"] for c in record["checks"]} == {"ex2_mask", "ex2_causal"}


def test_doctor_lists_every_layer():
    out = _run("doctor").stdout
    for layer in ("landlock", "network namespace", "cgroup pids and memory", "rlimits", "scrubbed environment",
                  "seccomp", "IPC namespace", "mount namespace", "PID namespace", "private /tmp and /dev/shm",
                  "unprivileged uid"):
        assert layer in out


def test_grade_reports_a_missing_student_clearly(tmp_path):
    (tmp_path / "submitted" / "ann" / "ch04_attention").mkdir(parents=True)
    proc = _run("grade", "--course", str(tmp_path), "--student", "bob")
    assert proc.returncode == 1 and "no submission folder for bob" in proc.stderr


def test_progress_line_shows_done_failures_and_eta():
    stream = io.StringIO()
    bar = Progress(4, done=1, stream=stream)
    bar.advance(failed=True)
    bar.advance()
    line = bar.line()
    assert "3/4 graded" in line and "1 flagged for review" in line and "ETA" in line
    assert stream.getvalue().count("\n") >= 1


def test_bad_paths_and_numbers_get_clear_errors(tmp_path):
    proc = _run("grade", "--course", str(tmp_path / "nowhere"))
    assert proc.returncode == 1 and "is not a folder" in proc.stderr and "--course" in proc.stderr
    (tmp_path / "empty" / "source" / "ch04_attention").mkdir(parents=True)
    (tmp_path / "empty" / "source" / "ch04_attention" / "ex1_attention.ipynb").write_text("{}")
    proc = _run("grade", "--course", str(tmp_path / "empty"))
    assert proc.returncode == 1 and "no submissions found" in proc.stderr and "--course" in proc.stderr
    assert "nbgrader collect" in proc.stderr
    proc = _run("check", str(tmp_path / "missing.ipynb"))
    assert proc.returncode == 1 and "does not exist" in proc.stderr
    proc = _run("grade", "--workers", "0")
    assert proc.returncode == 2 and "must be at least 1" in proc.stderr
    assert not (tmp_path / "nowhere").exists()


def test_a_stopped_run_says_one_submission_in_the_singular(tmp_path):
    import signal
    from autograder.__main__ import _stopped, build_parser
    from autograder.run.batch import BatchStopped
    args = build_parser().parse_args(["grade", "--course", str(tmp_path)])
    stop = BatchStopped(signal.SIGTERM, out=tmp_path / "grading", done=1, total=2)
    assert "the other 1 was not graded." in _stopped(args, stop)
    assert "the other 2 were not graded." in _stopped(args, BatchStopped(signal.SIGTERM, out=tmp_path, done=1, total=3))
    assert "README" not in build_parser().format_help()


def test_check_says_in_one_line_why_the_gradebook_could_not_be_read(tmp_path, capsys):
    """A gradebook without nbgrader's tables: check's note is the error's first line, not SQLAlchemy's SQL dump."""
    import sqlite3
    from types import SimpleNamespace
    from autograder.__main__ import _by_person
    (tmp_path / "nbgrader_config.py").write_text((ROOT / "nbgrader_config.py").read_text())
    sqlite3.connect(tmp_path / "gradebook.db").execute("CREATE TABLE other (x)").connection.close()
    record = SimpleNamespace(assignment="ch04_attention", student_id="ann")
    assert _by_person(record, SimpleNamespace(course=str(tmp_path), path=str(tmp_path))) == {}
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such table" in err and "SELECT" not in err, err
    assert "the table shows the checks' scores alone" in err


def test_the_demo_announces_the_class_it_grades(tmp_path):
    """The README announced a sample class of 60 while `make demo` graded 71 (the corpus grew): the demo says
    its class's size and makeup before grading, counted from the lists that build it, and that is the number
    of submissions `grade` finds there (the summary's "N submissions graded")."""
    import re

    from autograder.course.submissions import discover
    from autograder.samples.demo import prepare
    from autograder.samples.sample_class import makeup
    said = makeup()
    total, parts = re.match(r"(\d+) submissions \((.*)\)$", said).groups()
    assert int(total) == sum(int(p.split()[0]) for p in parts.split(", ")), said
    demo = prepare(tmp_path / "demo")
    assert len(discover(demo, "ch04_attention")) == int(total)
