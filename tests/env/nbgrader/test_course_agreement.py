"""`grade` agrees with `nbgrader autograde` in the instructor's own course: honest work from the sample
class (right and wrong), per-notebook helpers and stubs, a due date in the gradebook and a late-penalty
plugin in nbgrader_config.py. Afterwards `nbgrader export` on the course gradebook equals grades.csv.
nbgrader runs every notebook of every student in a kernel of its own (the suite's longest wait), so this is
the one class plain nbgrader autogrades: the sample-class students and the crafted ones together, autograded
once and graded once."""
import hashlib

import pytest

from autograder.run.batch import grade_batch
from nbgrader_fast import run_nbgrader
from autograder.samples.synthetic import write_submission
from batch_helpers import export_rows, make_class, read_csv
from conftest import NOTEBOOKS
from nbgrader_helpers import autograde_and_export, plain_nbgrader

A = "ch04_attention"
DUE = "2026-11-02 12:00:00 UTC"
STUB = "def softmax(x, axis=-1):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"
OLD_SOFTMAX = "def softmax(x, axis=-1):\n    e = np.exp(x)\n    return e / e.sum(axis=axis, keepdims=True)\n"
INLINE_CROSS = ("def cross_attention(Q, K, V):\n    s = Q @ K.T / np.sqrt(Q.shape[-1])\n"
                "    e = np.exp(s - s.max(axis=-1, keepdims=True))\n    w = e / e.sum(axis=-1, keepdims=True)\n"
                "    return w @ V, w\n")
USES_LATER = "def scaled_dot_product_attention(Q, K, V):\n    return attend(Q, K, V)\n"
LATER = "\n\ndef attend(Q, K, V):\n    return cross_attention(Q, K, V)\n"
GOOD_SOFTMAX = ("def softmax(x, axis=-1):\n    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
                "    return e / e.sum(axis=axis, keepdims=True)\n")
RAISING_CROSS = "def cross_attention(Q, K, V):\n    raise RuntimeError('scratch work')\n"
LATE_PLUGIN = ("from nbgrader.plugins import BasePlugin\n\n\nclass SubMarks(BasePlugin):\n"
               "    def late_submission_penalty(self, student_id, score, total_seconds_late):\n"
               "        return round(total_seconds_late / 3600)      # a point per hour, per notebook\n")

SAMPLE = ["correct-einsum", "correct-finite-mask", "no-scaling", "mask-after-softmax", "dtype-ignored",
          "cross-causal-mask", "unfinished-ex4"]
CLASS = {   # student -> ({solution cell: code (appended when it starts with a newline)}, timestamp)
    "honest": ({}, "2026-11-01 09:00:00.000000 UTC"),
    "stub-ex4-inline-softmax": ({"ex4_softmax_solution": STUB, "ex4_cross_solution": INLINE_CROSS}, None),
    "old-softmax-copy-in-ex4": ({"ex4_softmax_solution": OLD_SOFTMAX}, None),
    "stub-ex1-softmax-in-ex2": ({"ex1_softmax_solution": STUB}, None),
    "helper-only-in-ex4": ({"ex1_attention_solution": USES_LATER, "ex4_cross_solution": LATER}, None),
    "late-two-hours": ({}, "2026-11-02 15:00:00.000000 Europe/Paris"),
    "scratch-after-grade-cells": ({"ex1_softmax_solution": STUB}, None),
}
# student -> cells added at a notebook's end, after its grade cells (nbgrader's tests run before them)
ADDED = {"scratch-after-grade-cells": {"ex1_attention": [GOOD_SOFTMAX], "ex4_cross_attention": [RAISING_CROSS]}}


def _notebook(solution_id: str) -> str:
    return next(nb for nb in NOTEBOOKS if nb.startswith(solution_id.split("_")[0]))


def _submit(course, student: str, cells: dict, timestamp: str | None) -> None:
    import nbformat
    folder = write_submission(course / "release" / A, course / "source" / A, course / "submitted" / student / A,
                              extra_cells=ADDED.get(student))
    for solution_id, code in cells.items():
        path = folder / f"{_notebook(solution_id)}.ipynb"
        nb = nbformat.read(path, as_version=4)
        cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == solution_id)
        cell.source = cell.source + code if code.startswith("\n") else code
        nbformat.write(nb, path)
    if timestamp:
        (folder / "timestamp.txt").write_text(timestamp)
    (folder / "submission_secret.txt").write_text(hashlib.sha256(student.encode()).hexdigest()[:32])  # as collected


def _autograded(tmp, sample: list[str], crafted: dict):
    """A course of ``sample`` (sample-class students) and ``crafted`` ones, autograded by plain nbgrader and
    exported: (course, nbgrader's totals)."""
    course = make_class(tmp, sample)
    plain_nbgrader(course)              # nbgrader's own Execute: the hidden tests run in the student's kernel
    (course / "late.py").write_text(LATE_PLUGIN)
    with open(course / "nbgrader_config.py", "a") as f:
        f.write('c.AssignLatePenalties.plugin_class = "late.SubMarks"\n')
    for student, (cells, timestamp) in crafted.items():
        _submit(course, student, cells, timestamp)
    run_nbgrader(["db", "assignment", "add", A, f"--duedate={DUE}", "--log-level=WARN"], course, "db assignment add")
    run_nbgrader(["generate_assignment", A, "--force", "--log-level=WARN"], course, "generate_assignment")
    return course, autograde_and_export(course)


GROUPS = {"crafted": list(CLASS), "sample": SAMPLE}


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """The sample-class students and the crafted ones (stubs, helpers, late work, scratch cells) in one
    course, as nbgrader and grade leave it."""
    course, nbgrader_scores = _autograded(tmp_path_factory.mktemp("agreement"), SAMPLE, CLASS)
    kernel = (course / "autograded" / "honest" / A / "ex2_causal_mask.ipynb").read_text()
    assert "grade_cell(" in kernel, "nbgrader must run the hidden tests here, not the hardened grader"
    (course.parent / "ex2-autograded-by-nbgrader.ipynb").write_text(kernel)     # grade writes autograded/ again
    return course, nbgrader_scores, grade_batch(course=course, workers=2, progress=False)


EXPECTED_TOTALS = {"honest": 28.0, "stub-ex4-inline-softmax": 28.0, "stub-ex1-softmax-in-ex2": 20.0,
                   "helper-only-in-ex4": 23.0,
                   "scratch-after-grade-cells": 20.0,        # ex1 graded with its stub, ex4 before the scratch cell
                   "late-two-hours": 28.0 - 4 * 2,           # two hours late: 2 points per notebook
                   "no-scaling": 26.0, "mask-after-softmax": 24.0}


def totals_agree(graded, students) -> None:
    """grade's totals equal nbgrader's for ``students``, the class is exactly every group's students, and
    the known ones are as expected."""
    course, nbgrader_scores, _ = graded
    everyone = {r["student_id"]: float(r["total"]) for r in read_csv(course / "grading" / "grades.csv")}
    assert set(everyone) == set(nbgrader_scores) == {s for group in GROUPS.values() for s in group}
    ours = {s: t for s, t in everyone.items() if s in students}
    assert ours == {s: nbgrader_scores[s] for s in students}
    assert set(ours) == set(students)
    assert {s: t for s, t in ours.items() if s in EXPECTED_TOTALS} == \
        {s: t for s, t in EXPECTED_TOTALS.items() if s in ours}


def export_equals_grades_csv(course, students) -> None:
    exported = {r["student_id"]: r for r in export_rows(course)}
    rows = [row for row in read_csv(course / "grading" / "grades.csv") if row["student_id"] in students]
    assert sorted(row["student_id"] for row in rows) == sorted(students)
    for row in rows:
        theirs = exported[row["student_id"]]
        assert float(theirs["score"]) == float(row["total"]), row["student_id"]
        assert float(theirs["late_submission_penalty"] or 0) == float(row["late_penalty"])


@pytest.mark.parametrize("group", GROUPS)
def test_totals_agree_with_nbgrader_autograde(both, group):
    totals_agree(both, GROUPS[group])


def test_late_submission_shown_everywhere(both):
    course, _, result = both
    row = {r["student_id"]: r for r in read_csv(course / "grading" / "grades.csv")}["late-two-hours"]
    assert row["submitted"] == "2026-11-02 14:00:00.000000 UTC" and float(row["seconds_late"]) == 7200.0
    assert float(row["late_penalty"]) == 8.0 and row["ex1_attention"] == "8"       # notebooks: before the penalty
    on_time = {r["student_id"]: r for r in read_csv(course / "grading" / "grades.csv")}["honest"]
    assert float(on_time["seconds_late"]) == 0.0 and float(on_time["late_penalty"]) == 0.0
    page = (course / "feedback" / "late-two-hours" / A / "ex2_causal_mask.html").read_text()
    assert "2 h after the due date" in page and "Score: 7 / 9" in page
    assert "2 h after the due date" in (course / "grading" / "report.html").read_text()


@pytest.mark.parametrize("group", GROUPS)
def test_nbgrader_export_of_the_course_gradebook_equals_grades_csv(both, group):
    export_equals_grades_csv(both[0], GROUPS[group])


def test_the_explore_widget_draws_its_static_plot_under_nbgrader_autograde(both):
    """nbgrader runs every cell with allow_stdin=False: ex2's explore cell draws one static plot there, no
    widget and no error (see test_widget.py for nbval, the sandbox and a frontend)."""
    import nbformat
    course = both[0]
    nb = nbformat.read(course.parent / "ex2-autograded-by-nbgrader.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "ex2_explore_widget")
    assert [o.output_type for o in cell.outputs] == ["display_data"] and "image/png" in cell.outputs[0].data
    assert "application/vnd.jupyter.widget-view+json" not in cell.outputs[0].data
