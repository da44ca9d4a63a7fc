"""A gradebook people use while a class is graded, on SQLite and on a real PostgreSQL server.

A teaching assistant saves manual scores (formgrader's own calls, ``gradebook_editor``) all through a
grading run: each save goes through at once (the run holds the gradebook only for one small batch
of students at a time), none is overwritten or flagged again by the run, and every output afterwards
(the gradebook, nbgrader export, grades.csv, results.json) shows each one.
"""
import json
import subprocess
import sys

import pytest

from batch_helpers import export_gradebook, make_class, read_csv
from conftest import TESTS
from gradebook_helpers import fill_gradebook
from test_gradebook_postgres import on_database

pytestmark = pytest.mark.filterwarnings("ignore:.*not in session")
CLASS = ["correct-1", "no-scaling", "mask-after-softmax", "crossover-off-by-one", "cross-causal-mask",
         "correct-einsum"]


def gradebook_of(db: str, course, request) -> str:
    """The course's own gradebook on ``db``: a SQLite file in the course, or a new PostgreSQL database."""
    if db == "sqlite":
        return f"sqlite:///{course / 'gradebook.db'}"
    url = request.getfixturevalue("postgres").create_database(f"edits_{abs(hash(str(course))) % 10**8}")
    on_database(course, url)
    return url


def manual_scores(url: str) -> dict:
    from autograder.gradebook.nbgrader_api import nbgrader_api
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        return {(s.student.id, g.name): (g.manual_score, g.needs_manual_grade)
                for s in gb.find_assignment("ch04_attention").submissions for nb in s.notebooks for g in nb.grades
                if g.manual_score is not None}


@pytest.mark.parametrize("db", ["sqlite", "postgres"])
def test_manual_scores_saved_while_the_class_is_graded_are_kept_and_shown(db, tmp_path, request):
    course = make_class(tmp_path, CLASS)
    url = gradebook_of(db, course, request)
    fill_gradebook(url, course, {s: {} for s in CLASS})          # an earlier run's rows: people grade those
    editor = subprocess.Popen([sys.executable, str(TESTS / "helpers" / "gradebook_editor.py"), url,
                               str(course / "grading" / "records"), str(len(CLASS)), "0.1", *CLASS],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert json.loads(editor.stdout.readline()) == {"ready": True}, editor.stderr.read()
    run = subprocess.Popen([sys.executable, "-m", "autograder", "grade", "--course", str(course), "--workers", "1"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    said, why = editor.communicate(timeout=600)
    out, err = run.communicate(timeout=600)
    assert run.returncode == 0, err
    edits = [json.loads(line) for line in said.splitlines()]
    assert editor.returncode == 0, (edits[-1:], why[-2000:])
    assert len(edits) >= 2 and any(not e["graded_before"] for e in edits), edits   # saves the run then rewrote
    assert max(e["waited"] for e in edits) < 20.0                # held up for one batch at most, not the class
    last = {(e["student"], e["grade_id"]): e["score"] for e in edits}
    assert manual_scores(url) == {key: (score, False) for key, score in last.items()}
    rows = {r["student_id"]: float(r["total"]) for r in read_csv(course / "grading" / "grades.csv")}
    assert rows == export_gradebook(course)
    for student in {s for s, _ in last}:
        record = json.loads((course / "grading" / "records" / f"{student}.json").read_text())
        auto = {g: c["earned"] for g, c in record["cells"].items()}
        expected = sum(last.get((student, g), v) for g, v in auto.items())
        assert rows[student] == pytest.approx(expected), student
        results = json.loads((course / "grading" / "results" / student / "results.json").read_text())
        assert results["score"] == pytest.approx(expected)
