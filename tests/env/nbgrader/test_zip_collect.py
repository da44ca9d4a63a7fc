"""A class collected without nbgrader's exchange (an LMS download through `nbgrader zip_collect`) gets its
feedback in nbgrader's layout, as `generate_feedback` writes it: feedback/<student>/<assignment>/<notebook>.html
with the timestamp and no secret, for the instructor to zip and upload (it once stayed empty). A class
collected through the exchange keeps its rule (tests/env/nbgrader/test_course_exchange.py: only deliverable pages)."""
import shutil
import zipfile

import pytest

from autograder.__main__ import main
from nbgrader_fast import run_nbgrader
from batch_helpers import make_class, read_csv
from conftest import NOTEBOOKS

pytestmark = pytest.mark.filterwarnings("ignore:.*not in session")
A = "ch04_attention"
NAMED = r"--FileNameCollectorPlugin.named_regexp=.*_(?P<student_id>[a-z]+)_attempt_(?P<timestamp>[0-9: -]+)_(?P<file_id>\w+)"


def test_a_class_collected_with_zip_collect_gets_nbgraders_feedback_layout(tmp_path):
    course = make_class(tmp_path, ["correct-1", "no-scaling"])
    archive = course / "downloaded" / A / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "submissions.zip", "w") as zf:       # as an LMS names the files it hands out
        for student, sample in (("ada", "correct-1"), ("bob", "no-scaling")):
            for path in sorted((course / "submitted" / sample / A).glob("*.ipynb")):
                zf.write(path, f"{A}_{student}_attempt_2026-11-01 09:00:00_{path.name}")
    shutil.rmtree(course / "submitted")
    run_nbgrader(["zip_collect", A, NAMED, "--log-level=WARN"], course, "zip_collect")
    assert sorted(p.name for p in (course / "submitted").iterdir()) == ["ada", "bob"]
    assert not list((course / "submitted").rglob("submission_secret.txt"))

    assert main(["grade", "--course", str(course), "--workers", "1"]) == 0
    rows = {r["student_id"]: r for r in read_csv(course / "grading/grades.csv")}
    for student in ("ada", "bob"):
        folder = course / "feedback" / student / A
        assert sorted(p.stem for p in folder.glob("*.html")) == NOTEBOOKS, student
        assert (folder / "timestamp.txt").read_text().startswith("2026-11-01 09:00:00")
        assert not (folder / "submission_secret.txt").exists()
        page = (folder / "ex1_attention.html").read_text()
        assert f"Feedback for {student}: ex1_attention.ipynb" in page
    assert rows["ada"]["total"] == "28" and "Score: 0 / 2" not in (course / f"feedback/ada/{A}/ex1_attention.html").read_text()
    assert "collected without nbgrader&#x27;s exchange" in (course / "grading/report.html").read_text()
