"""The points are the course's (design rule 3): an instructor re-weights a cell in the source notebook,
as nbgrader instructors do, and release, `grade`, the gradebook, `nbgrader export`, `nbgrader autograde`
(through the hardened door) and every page agree on it; the rubric's checks share the cell's points by
their weights (here 3 points for ex1_attention's checks weighted 1, 2, 1, 1: 0.6, 1.2, 0.6, 0.6)."""
import json

import pytest

from autograder.__main__ import main
from nbgrader_fast import run_nbgrader
from autograder.samples import sample_class
from autograder.samples.synthetic import write_submission
from batch_helpers import export_gradebook, make_class, read_csv

pytestmark = pytest.mark.filterwarnings("ignore:.*not in session")
A = "ch04_attention"


def _points(path, grade_id):
    cells = json.loads(path.read_text())["cells"]
    return next(c["metadata"]["nbgrader"]["points"] for c in cells
                if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)


def test_a_cell_re_weighted_in_the_source_notebook_is_worth_that_everywhere(tmp_path):
    course = make_class(tmp_path, [])
    source = course / "source" / A / "ex1_attention.ipynb"
    nb = json.loads(source.read_text())
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "ex1_attention":
            cell["metadata"]["nbgrader"]["points"] = 3                       # was 5
    source.write_text(json.dumps(nb, indent=1))
    assert main(["release", "--course", str(course)]) == 0
    assert _points(course / "release" / A / "ex1_attention.ipynb", "ex1_attention") == 3
    students = sample_class.students()
    for student in ("correct-1", "no-scaling"):                            # handed the new release
        write_submission(course / "release" / A, course / "source" / A, course / "submitted" / student / A,
                         students[student])

    assert main(["grade", "--course", str(course), "--workers", "1"]) == 0
    rows = {r["student_id"]: r for r in read_csv(course / "grading/grades.csv")}
    assert {r["max_total"] for r in rows.values()} == {"26"}
    assert rows["correct-1"]["total"] == "26" and rows["correct-1"]["needs_review"] == "false", rows
    bob = json.loads((course / "grading/records/no-scaling.json").read_text())
    cell = bob["cells"]["ex1_attention"]
    assert cell["max"] == 3 and 0 < cell["earned"] < 3
    weights = {c["check"]: c["max_points"] for c in bob["checks"] if c["grade_id"] == "ex1_attention"}
    assert weights == pytest.approx({"shapes": 0.6, "weights_and_output_match": 1.2, "rows_sum_to_one": 0.6,
                                     "stable_for_large_scores": 0.6})
    assert {s: float(r["total"]) for s, r in rows.items()} == export_gradebook(course)
    page = (course / "grading/feedback/no-scaling/index.html").read_text()
    total = f"{float(rows['no-scaling']['total']):g}"
    assert f"Total: {total} / 26" in page and "/1.2</td>" in page, page[:3000]

    run_nbgrader(["autograde", A, "--force", "--student=no-scaling", "--log-level=WARN"], course, "autograde",
                 timeout=600)                                               # nbgrader's own door: the same points
    assert export_gradebook(course)["no-scaling"] == float(rows["no-scaling"]["total"])
