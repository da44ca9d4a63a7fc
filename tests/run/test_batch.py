"""Batch grading: outputs, gradebook, resume, crashes, no hidden tests in feedback (a run killed or stopped
at each stage: test_faults.py; the same class on Dask: tests/env/dask/test_dask_batch.py; its pages in
Chromium: tests/env/browser/test_batch_pages.py)."""
import json
import os
import sys

import pytest

from autograder.run.batch import grade_batch
from autograder.outputs.csvout import COLUMNS
from batch_helpers import SMALL, export_gradebook, gradebook_in, read_csv, records
from conftest import ROOT, SOURCE


@pytest.fixture(scope="module")
def graded(graded_classes, tmp_path_factory):
    """The small class graded into out/ beside the course (once a run: tests/helpers/graded_classes.py)."""
    return graded_classes.copy(tmp_path_factory.mktemp("batch"), SMALL, workers=2)


def test_every_output_is_written(graded):
    course, out = graded
    rows = read_csv(out / "grades.csv")
    assert list(rows[0]) == COLUMNS and [r["student_id"] for r in rows] == sorted(SMALL)
    by = {r["student_id"]: r for r in rows}
    assert by["correct-1"]["total"] == "28" and by["correct-1"]["needs_review"] == "false"
    assert by["no-scaling"]["diagnoses"] == "no-scaling" and by["no-scaling"]["ex1_attention"] == "6"
    for student in SMALL:
        assert (out / "feedback" / student / "index.html").exists()
        results = json.loads((out / "results" / student / "results.json").read_text())
        assert results["score"] == int(by[student]["total"])
        assert sum(t["max_score"] for t in results["tests"]) == 28
    assert (out / "report.html").read_text().count("<svg") >= 3


def test_crash_and_damage_get_rows_for_review(graded):
    _, out = graded
    by = {r["student_id"]: r for r in read_csv(out / "grades.csv")}
    assert by["hostile-exits"]["needs_review"] == "true" and by["hostile-exits"]["total"] == "26"
    assert by["damaged-missing-notebook"]["needs_review"] == "true"
    assert by["damaged-missing-notebook"]["total"] == "22"
    lost = [c for c in records(out)["damaged-missing-notebook"]["checks"] if c["grade_id"].startswith("ex3_")]
    assert lost and all("was not checked: ex3_memory.ipynb could not be graded as it was submitted" in c["message"]
                        and "write the function" not in c["message"] for c in lost)   # never 'not defined'


def test_course_gradebook_agrees_with_csv_and_marks_review(graded):
    """`nbgrader export` in the course, with no options, shows the scores of grades.csv."""
    course, out = graded
    assert not (out / "gradebook.db").exists()
    exported = export_gradebook(course)
    assert exported == {r["student_id"]: float(r["total"]) for r in read_csv(out / "grades.csv")}
    from nbgrader.api import Gradebook
    os.environ["PATH"] = f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"   # nbgrader runs alembic
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "attention-course") as gb:
        sub = gb.find_submission("ch04_attention", "hostile-exits")
        assert sub.needs_manual_grade
        assert not gb.find_submission("ch04_attention", "correct-1").needs_manual_grade


def _hidden_sources():
    import nbformat
    hidden = []
    for path in SOURCE.glob("*.ipynb"):
        for cell in nbformat.read(path, as_version=4).cells:
            if "BEGIN HIDDEN TESTS" in cell.source:
                hidden += [ln.strip() for ln in cell.source.split("BEGIN HIDDEN TESTS")[1].splitlines()
                           if ln.strip() and "END HIDDEN" not in ln]
    return hidden


def test_feedback_never_contains_hidden_tests(graded):
    _, out = graded
    hidden = _hidden_sources()
    rubric_lines = [ln.strip() for p in (ROOT / "autograder" / "grading" / "checks").glob("*.py")
                    for ln in p.read_text().splitlines() if len(ln.strip()) > 30 and "=" in ln]
    assert hidden and rubric_lines
    for page in list((out / "feedback").rglob("*.html")) + list((out / "results").rglob("*.json")):
        text = page.read_text()
        assert not any(h in text for h in hidden), page
        assert not any(r in text for r in rubric_lines), page


def test_resume_skips_complete_records(graded, tmp_path):
    course, reference_out = graded
    import shutil
    from dataclasses import replace

    from autograder.records import load_record, write_record
    out = tmp_path / "again"
    shutil.copytree(reference_out / "records", out / "records")
    write_record(out, replace(load_record(out, SMALL[0]), student_id="gone"))   # graded, then its folder removed
    (course / "submitted" / "zed" / "ch04_Attention").mkdir(parents=True)           # a misnamed assignment
    try:
        result = grade_batch(course=course, out=out, resume=True, progress=False, workers=1,
                             gradebook_url=gradebook_in(out), create_gradebook=True)
    finally:
        shutil.rmtree(course / "submitted" / "zed")
    assert result.graded == [] and sorted(result.skipped) == sorted(SMALL)
    assert (out / "grades.csv").read_text() == (reference_out / "grades.csv").read_text()
    said = "\n".join(result.notes)
    assert "'gone' was graded before, but submitted/<student>/ch04_attention/ is gone" in said, said
    assert "submitted/zed/ holds no ch04_attention/ (it holds 'ch04_Attention'), so 'zed' was not graded" in said


def test_a_class_without_the_exchange_is_told_on_the_terminal_where_its_pages_are(graded, tmp_path):
    """A class copied into submitted/ by hand (init's list offers it) has no submission secrets, and the last
    command init prints, nbgrader release_feedback, stops there with a FileNotFoundError traceback: grade says so
    in its notes (printed on the terminal), not only in the report."""
    import shutil
    course, reference_out = graded
    assert not list((course / "submitted").rglob("submission_secret.txt"))
    out = tmp_path / "again"
    shutil.copytree(reference_out / "records", out / "records")
    result = grade_batch(course=course, out=out, resume=True, progress=False, workers=1,
                         gradebook_url=gradebook_in(out), create_gradebook=True)
    said = [n for n in result.notes if "submission_secret.txt" in n]
    assert len(said) == 1 and "nbgrader release_feedback needs the exchange" in said[0], result.notes
    assert "feedback/&lt;student&gt;/ch04_attention/" in (out / "report.html").read_text()
