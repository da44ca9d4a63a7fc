"""Batch grading: outputs, gradebook, resume, crashes, Dask, no hidden tests in feedback (a run killed
or stopped at each stage: test_faults.py)."""
import json
import os
import sys

import pytest

from autograder.run.batch import grade_batch
from autograder.outputs.csvout import COLUMNS
from batch_helpers import SMALL, export_gradebook, gradebook_in, make_class, read_csv, records
from browser_helpers import FLAGS, browser
from conftest import ROOT, SOURCE


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("batch")
    course = make_class(tmp)
    result = grade_batch(course=course, out=tmp / "out", workers=2, progress=False)
    return course, tmp / "out", result


def test_every_output_is_written(graded):
    course, out, result = graded
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
    _, out, _ = graded
    by = {r["student_id"]: r for r in read_csv(out / "grades.csv")}
    assert by["hostile-exits"]["needs_review"] == "true" and by["hostile-exits"]["total"] == "26"
    assert by["damaged-missing-notebook"]["needs_review"] == "true"
    assert by["damaged-missing-notebook"]["total"] == "22"
    lost = [c for c in records(out)["damaged-missing-notebook"]["checks"] if c["grade_id"].startswith("ex3_")]
    assert lost and all("was not checked: ex3_memory.ipynb could not be graded as it was submitted" in c["message"]
                        and "write the function" not in c["message"] for c in lost)   # never 'not defined'


def test_course_gradebook_agrees_with_csv_and_marks_review(graded):
    """`nbgrader export` in the course, with no options, shows the scores of grades.csv."""
    course, out, _ = graded
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
    _, out, _ = graded
    hidden = _hidden_sources()
    rubric_lines = [ln.strip() for p in (ROOT / "autograder" / "grading" / "checks").glob("*.py")
                    for ln in p.read_text().splitlines() if len(ln.strip()) > 30 and "=" in ln]
    assert hidden and rubric_lines
    for page in list((out / "feedback").rglob("*.html")) + list((out / "results").rglob("*.json")):
        text = page.read_text()
        assert not any(h in text for h in hidden), page
        assert not any(r in text for r in rubric_lines), page


def test_resume_skips_complete_records(graded, tmp_path):
    course, reference_out, _ = graded
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


def test_dask_local_cluster_equals_local(graded, tmp_path):
    distributed = pytest.importorskip("distributed")
    course, reference_out, _ = graded
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        result = grade_batch(course=course, out=tmp_path / "dask", scheduler=cluster.scheduler_address,
                             progress=False, gradebook_url=gradebook_in(tmp_path / "dask"), create_gradebook=True)
    assert len(result.records) == len(SMALL)
    assert records(tmp_path / "dask") == records(reference_out)


PROBE = """() => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.top, r.width, r.height]; };
  const all = q => Array.from(document.querySelectorAll(q));
  const summary = document.querySelector('#summary');
  return {svgs: all('svg').map(box), images: document.images.length,
          tips: all('svg rect > title').map(t => t.textContent), texts: all('svg text').map(t => t.textContent),
          summaryTop: summary ? box(summary)[0] : null, sections: all('h2').map(h => h.textContent)};
}"""


def _render(out, page_path):
    """Open a page in headless Chromium; what PROBE sees, and every console or page error."""
    sync_api, chromium = browser()
    artifacts = ROOT / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as p:
        chrome = p.chromium.launch(executable_path=chromium, args=FLAGS)
        page = chrome.new_page(viewport={"width": 1000, "height": 900})
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto((out / page_path).as_uri())
        seen = page.evaluate(PROBE)
        page.screenshot(path=str(artifacts / (page_path.replace("/", "_") + ".png")), full_page=True)
        page.set_viewport_size({"width": 420, "height": 900})                     # a phone
        seen["phone"] = page.evaluate("() => document.documentElement.scrollWidth")
        page.screenshot(path=str(artifacts / (page_path.replace("/", "_") + "-420.png")), full_page=True)
        chrome.close()
    assert errors == []
    assert seen["images"] == 0 and seen["svgs"] and all(w > 0 and h > 0 for _, w, h in seen["svgs"])
    assert seen["phone"] <= 420, f"{page_path} is {seen['phone']} px wide at a phone's 420 px"
    return seen


def test_feedback_page_reads_at_a_glance_in_chromium(graded):
    """Summary in the first screen; heatmaps inline with a tooltip per cell, tick labels and a NaN legend."""
    seen = _render(graded[1], "feedback/mask-after-softmax/index.html")
    assert seen["summaryTop"] is not None and seen["summaryTop"] < 900
    assert any(t.startswith("row 0, column 0: ") for t in seen["tips"])
    assert {"0", "1", "NaN", "query position i"} <= set(seen["texts"])


def test_report_renders_in_chromium(graded):
    seen = _render(graded[1], "report.html")
    assert any(t.endswith("%") for t in seen["texts"]) and seen["tips"]
    assert "Failures with no diagnosis" in seen["sections"]
