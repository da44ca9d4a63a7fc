"""Nothing half-written: a grading run killed with SIGKILL at several moments leaves every student in the
gradebook whole (all their scores, or no submission), on SQLite and on a real PostgreSQL server, and
``grade --resume`` completes it; a database server stopped mid-run costs one clear line and no record.
"""
import json
import os
import signal
import subprocess
import sys

import pytest

from batch_helpers import export_gradebook, make_class, read_csv
from pg_server import wait_until
from test_gradebook_concurrency import gradebook_of

pytestmark = pytest.mark.filterwarnings("ignore:.*not in session")
CLASS = ["correct-1", "no-scaling", "mask-after-softmax", "crossover-off-by-one", "cross-causal-mask"]


def _grade(course, *extra) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "autograder", "grade", "--course", str(course), "--workers", "1",
                             *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def written(url: str) -> dict[str, dict[str, float | None]]:
    """student -> grade_id -> auto score, for every submission in the gradebook (read with a new session)."""
    from autograder.gradebook.nbgrader_api import nbgrader_api
    try:
        with nbgrader_api().Gradebook(url, "attention-course") as gb:
            return {s.student.id: {g.name: g.auto_score for nb in s.notebooks for g in nb.grades}
                    for s in gb.find_assignment("ch04_attention").submissions}
    except Exception:  # noqa: BLE001 - nothing recorded yet (no tables, no assignment)
        return {}


def whole(url: str, course) -> dict:
    """Every student in the gradebook has every score of their record, none missing or half there."""
    rows = written(url)
    for student, scores in rows.items():
        record = json.loads((course / "grading" / "records" / f"{student}.json").read_text())
        assert None not in scores.values(), (student, scores)                    # no cell left unscored
        assert {g: scores[g] for g in record["cells"]} == {g: c["earned"] for g, c in record["cells"].items()}
    return rows


def _kill(run: subprocess.Popen) -> None:
    """SIGKILL to the run's group; a run that ended before its moment came (a --resume with little left to
    grade, which the wait allows) has nothing left to kill."""
    try:
        os.killpg(run.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    run.wait()


@pytest.mark.parametrize("db", ["sqlite", "postgres"])
def test_a_run_killed_at_any_moment_leaves_each_student_whole_and_resume_completes(db, tmp_path, request):
    course = make_class(tmp_path, CLASS)
    url = gradebook_of(db, course, request)
    records = course / "grading" / "records"
    moments = [lambda: any(records.glob("*.json")),                   # grading: the writer loads, records the cells
               lambda: len(written(url)) >= 1,                         # students going in
               lambda: len(written(url)) >= 3,
               lambda: len(list(records.glob("*.json"))) == len(CLASS)]           # graded: the last writes
    seen = []
    for moment in moments:
        run = _grade(course, "--resume")
        assert wait_until(lambda: moment() or run.poll() is not None, 300, step=0.01)
        _kill(run)
        seen.append(len(whole(url, course)))
    run = _grade(course, "--resume")
    out, err = run.communicate(timeout=600)
    assert run.returncode == 0, err
    assert sorted(whole(url, course)) == sorted(CLASS), seen
    totals = {r["student_id"]: float(r["total"]) for r in read_csv(course / "grading" / "grades.csv")}
    assert totals == export_gradebook(course)


def test_a_database_server_stopped_mid_run_is_one_line_and_resume_completes(postgres, tmp_path, request):
    course = make_class(tmp_path, CLASS)
    url = gradebook_of("postgres", course, request)
    run = _grade(course)
    try:
        assert wait_until(lambda: any((course / "grading" / "records").glob("*.json")) or run.poll() is not None,
                          300, step=0.01)
        postgres.stop("immediate")                                   # while the class is being graded
        out, err = run.communicate(timeout=600)
    finally:
        if run.poll() is None:
            _kill(run)
        postgres.restart()
    assert run.returncode == 1
    errors = [line for line in err.splitlines() if line.startswith("error: the gradebook:")]
    assert len(errors) == 1, err
    assert ("went away" in errors[0] or "cannot reach" in errors[0]) and "run grade --resume" in errors[0]
    assert "postgresql://postgres@/" in errors[0]
    assert len(list((course / "grading" / "records").glob("*.json"))) == len(CLASS)   # every record kept
    before = whole(url, course)
    run = _grade(course, "--resume")
    out, err = run.communicate(timeout=600)
    assert run.returncode == 0, err
    assert len(before) < len(CLASS) and sorted(whole(url, course)) == sorted(CLASS)   # (whole: nothing half there)
    assert {r["student_id"]: float(r["total"]) for r in read_csv(course / "grading" / "grades.csv")} == \
        export_gradebook(course)
