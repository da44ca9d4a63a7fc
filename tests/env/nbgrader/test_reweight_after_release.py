"""Re-weighting a cell after release (issue 38, major 3), walked as an instructor does it: the class is graded, a
person scores a cell by hand and comments, then the instructor gives ex2_causal 8 points instead of 6 in the
source notebook and runs the one documented command, `python -m autograder release`, then `grade --resume`.

Before: `release` left the gradebook at 6 points, the run's gradebook writer refused the new scores with advice
to remove the submissions or start a new gradebook (which would destroy the manual grades), the failed run
rewrote every page without the manual score and comment and with lateness "unknown", and every student was
flagged for an integrity problem (their copies hold the old points)."""
import json
import subprocess
import sys

import pytest

from batch_helpers import export_gradebook, make_class, read_csv
from gradebook_helpers import set_grade
from nbgrader_fast import run_nbgrader

A = "ch04_attention"
COMMENT = "Your softmax is fine; see me about the scaling."
LATE_PLUGIN = ("from nbgrader.plugins import BasePlugin\n\n\nclass SubMarks(BasePlugin):\n"
               "    def late_submission_penalty(self, student_id, score, total_seconds_late):\n"
               "        return 1\n")


def _run(course, *args) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "autograder", *args, "--course", str(course)], capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _comment(course, student, notebook, text) -> None:
    """What formgrader saves for a comment on the notebook's answer cells."""
    from autograder.gradebook.nbgrader_api import nbgrader_api
    with nbgrader_api().Gradebook(f"sqlite:///{course / 'gradebook.db'}", "attention-course") as gb:
        for comment in gb.find_submission_notebook(notebook, A, student).comments:
            comment.manual_comment = text
        gb.db.commit()


def _reweight(course, grade_id, points) -> None:
    path = course / "source" / A / "ex2_causal_mask.ipynb"
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("grade_id") == grade_id:
            meta["points"] = points
    path.write_text(json.dumps(nb, indent=1))


@pytest.fixture(scope="module")
def walked(tmp_path_factory):
    course = make_class(tmp_path_factory.mktemp("reweight"), ["correct-1", "no-scaling"])
    (course / "submitted/correct-1" / A / "timestamp.txt").write_text("2026-11-01 09:00:00.000000 UTC")
    (course / "late.py").write_text(LATE_PLUGIN)
    with open(course / "nbgrader_config.py", "a") as config:
        config.write('c.AssignLatePenalties.plugin_class = "late.SubMarks"\n')
    run_nbgrader(["db", "assignment", "add", A, "--duedate=2026-11-01 08:00:00 UTC"], course, "db assignment add")
    run_nbgrader(["generate_assignment", A, "--force", "--log-level=WARN"], course, "generate_assignment")
    _run(course, "grade")
    set_grade(f"sqlite:///{course / 'gradebook.db'}", "no-scaling", "ex1_attention", manual=4.5)
    _comment(course, "no-scaling", "ex1_attention", COMMENT)
    _reweight(course, "ex2_causal", 8)                                          # was 6
    released = _run(course, "release")
    resumed = _run(course, "grade", "--resume")
    return {"course": course, "released": released.stdout, "resumed": resumed,
            "rows": {r["student_id"]: r for r in read_csv(course / "grading/grades.csv")}}


def test_release_records_the_new_points_in_the_gradebook_and_says_so(walked):
    assert "ex2_causal is worth 8 (was 6)" in walked["released"], walked["released"]
    from autograder.gradebook.nbgrader_api import nbgrader_api
    with nbgrader_api().Gradebook(f"sqlite:///{walked['course'] / 'gradebook.db'}") as gb:
        cells = {c.name: c.max_score for nb in gb.find_assignment(A).notebooks for c in nb.grade_cells}
    assert cells["ex2_causal"] == 8


def test_resume_regrades_at_the_new_points_keeping_the_persons_work_on_every_page(walked):
    rows, course = walked["rows"], walked["course"]
    assert walked["resumed"].stderr.count("error") == 0, walked["resumed"].stderr
    assert {r["max_total"] for r in rows.values()} == {"30"}
    assert rows["correct-1"]["late_penalty"] == "4" and rows["no-scaling"]["late_penalty"] == "0"
    assert float(rows["no-scaling"]["ex1_attention"]) == 4.5 + 3                # the person's 4.5 and ex1_softmax's 3
    for page in (course / "grading/feedback/no-scaling/index.html", course / "feedback/no-scaling" / A / "ex1_attention.html"):
        text = page.read_text()
        assert COMMENT in text and "4.5/5" in text and "unknown" not in text, page
    assert export_gradebook(course) == {s: float(r["total"]) for s, r in rows.items()}


def test_no_student_is_flagged_for_the_instructors_change(walked):
    rows = walked["rows"]
    assert {r["needs_review"] for r in rows.values()} == {"false"}, rows
    report = (walked["course"] / "grading/report.html").read_text()
    assert "were changed (points or grade flags)" not in report
