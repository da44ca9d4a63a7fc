"""nbgrader's own doors run the hardened grader (design rule 3). After `grade`, what `nbgrader autograde`
leaves is there: formgrader (a real `jupyter server`) lists every submission as graded with our score and
opens a flagged notebook for manual grading, with the reason; only the cells that need a person are
flagged; `nbgrader generate_feedback` works and shows no hidden test or reference code. Then
`nbgrader autograde` in the course grades through the sandbox (round-1 cheats score as the honest work
they are) while another assignment of the same course keeps nbgrader's own execution.
One class, graded once by each door: nbgrader is slow."""
import importlib
import json
import os
import re
import sys
import time

import nbformat
import pytest

from autograder.assignment import NOTEBOOKS
from nbgrader_fast import nbgrader, run_nbgrader
from autograder.run.batch import grade_batch
from autograder.samples.synthetic import write_submission
from batch_helpers import export_rows, make_class, read_csv
from conftest import SOURCE
from formgrader_helpers import children, formgrader, formgrader_page
from sandbox_helpers import WRONG_MASK

A = "ch04_attention"
STUDENTS = ["correct-1", "no-scaling", "damaged-missing-notebook", "damaged-invalid-json", "hostile-exits"]
CHEATS = ["cheat_monkeypatch_numpy_testing", "cheat_ipython_exception_handler", "cheat_ipython_input_transformer"]
UNANSWERED = "unanswered-ex3"               # hands ex3 in as it was handed out
CLASS = [*STUDENTS, "honest-wrong", UNANSWERED, *CHEATS]
BUTTON = "cheat_ipython_input_transformer"  # autograded again by formgrader's Autograde button
UNREADABLE = "damaged-invalid-json"         # nbgrader cannot parse its ex4 notebook: `grade` alone grades it
STAMP = "2026-11-01 09:00:00.000000 UTC"    # correct-1 hands in an hour late: a point off per notebook
DUE = "2026-11-01 08:00:00 UTC"
LATE_PLUGIN = ("from nbgrader.plugins import BasePlugin\n\n\nclass SubMarks(BasePlugin):\n"
               "    def late_submission_penalty(self, student_id, score, total_seconds_late):\n"
               "        return round(total_seconds_late / 3600)\n")
MARKUP = "my notes <script>alert(1)</script> <img src=x onerror=alert(2)> [see](javascript:alert(3))"
LIVE = ("<script>alert", "<img src=x", 'href="javascript:')      # what would run in a grader's browser
ANSWER = "def answer():\n    ### BEGIN SOLUTION\n    return 42\n    ### END SOLUTION\n"
TEST = "assert answer() == 42, 'answer() should be 42'\n### BEGIN HIDDEN TESTS\nassert answer() + 1 == 43\n### END HIDDEN TESTS\n"


def _cell(source: str, grade_id: str, **flags) -> nbformat.NotebookNode:
    meta = {"grade": False, "solution": False, "locked": False, **flags, "grade_id": grade_id, "schema_version": 3}
    return nbformat.v4.new_code_cell(source, metadata={"nbgrader": meta})


def _other_assignment(course) -> None:
    """hw1, an assignment of another chapter in the same course (as `init --merge` leaves a course):
    one answer cell and one test cell worth 2 points; ada answers it, bob does not."""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells = [_cell(ANSWER, "answer", solution=True), _cell(TEST, "answer_test", grade=True, locked=True, points=2)]
    (course / "source/hw1").mkdir(parents=True)
    nbformat.write(nb, course / "source/hw1/hw1.ipynb")
    run_nbgrader(["generate_assignment", "hw1", "--force", "--log-level=WARN"], course, "generate_assignment hw1")
    for student, body in (("ada", "    return 42\n"), ("bob", "    return 7\n")):
        handed = nbformat.read(course / "release/hw1/hw1.ipynb", as_version=4)
        handed.cells[0].source = "def answer():\n" + body
        (course / "submitted" / student / "hw1").mkdir(parents=True)
        nbformat.write(handed, course / "submitted" / student / "hw1/hw1.ipynb")


def _unanswered(path, released) -> None:
    """Every answer cell of ``path`` back as handed out (the rest of the file stays the student's)."""
    nb, handed = nbformat.read(path, as_version=4), nbformat.read(released, as_version=4)
    stubs = {c.metadata.nbgrader.grade_id: c.source for c in handed.cells
             if c.metadata.get("nbgrader", {}).get("solution")}
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") in stubs:
            cell.source = stubs[cell.metadata.nbgrader.grade_id]
    nbformat.write(nb, path)


def _gradebook(course) -> dict:
    """student -> notebook -> {"grades": {grade_id: (auto_score, needs_manual_grade)}, "comments": [auto_comment]}."""
    from nbgrader.api import Gradebook
    os.environ["PATH"] = f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"   # nbgrader runs alembic
    out = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "attention-course") as gb:
        for student in CLASS:
            sub = gb.find_submission(A, student)
            out[student] = {nb.name: {"grades": {g.name: (g.auto_score, g.needs_manual_grade) for g in nb.grades
                                                 if g.max_score > 0},
                                      "comments": sorted(c.auto_comment or "" for c in nb.comments)}
                            for nb in sub.notebooks}
    return out


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = make_class(tmp_path_factory.mktemp("doors"), STUDENTS)
    release, source = course / "release" / A, course / "source" / A
    write_submission(release, source, course / "submitted/honest-wrong" / A, {"causal_mask": WRONG_MASK})
    for name in CHEATS:
        code = importlib.import_module(f"adversarial.{name}").CODE
        write_submission(release, source, course / "submitted" / name / A, {"causal_mask": WRONG_MASK + "\n" + code})
    (course / "submitted/correct-1" / A / "timestamp.txt").write_text(STAMP)
    _unanswered(write_submission(release, source, course / "submitted" / UNANSWERED / A, {}) / "ex3_memory.ipynb",
                release / "ex3_memory.ipynb")
    notes = course / "submitted/no-scaling" / A / "ex1_attention.ipynb"
    nb = json.loads(notes.read_text())
    nb["cells"].insert(1, {"cell_type": "markdown", "id": "notes", "metadata": {}, "source": MARKUP})
    notes.write_text(json.dumps(nb))
    (course / "late.py").write_text(LATE_PLUGIN)
    with open(course / "nbgrader_config.py", "a") as f:
        f.write('c.AssignLatePenalties.plugin_class = "late.SubMarks"\n')
        f.write("c.SandboxedExecute.keep_server = 1.0\n")      # formgrader's: how long a fork server outlives a button
    run_nbgrader(["db", "assignment", "add", A, f"--duedate={DUE}", "--log-level=WARN"], course, "db assignment add")
    run_nbgrader(["generate_assignment", A, "--force", "--log-level=WARN"], course, "generate_assignment")
    _other_assignment(course)
    return course


@pytest.fixture(scope="module")
def graded(course, tmp_path_factory):
    """`grade`, then what formgrader, the gradebook and `nbgrader generate_feedback` show."""
    result = grade_batch(course=course, assignment=A, workers=2, progress=False)
    seen = {"result": result, "rows": {r["student_id"]: r for r in read_csv(course / "grading/grades.csv")},
            "gradebook": _gradebook(course)}
    with formgrader(course, tmp_path_factory.mktemp("formgrader")) as server:
        seen["submissions"] = server.api(f"submissions/{A}")
        seen["notebooks"] = {nb: server.api(f"submitted_notebooks/{A}/{nb}") for nb in NOTEBOOKS}
        flagged = next(s["id"] for s in seen["notebooks"]["ex3_memory"] if s["student"] == "damaged-missing-notebook")
        seen["page"] = server.get(f"/formgrader/submissions/{flagged}/")
        seen["in chromium"] = formgrader_page(server, flagged)
        seen["comments"] = server.api(f"comments?submission_id={flagged}")
        notes = next(s["id"] for s in seen["notebooks"]["ex1_attention"] if s["student"] == "no-scaling")
        seen["notes_page"] = server.get(f"/formgrader/submissions/{notes}/")
        seen["button"] = server.api(f"submission/{A}/{BUTTON}/autograde", "POST")   # the Autograde button
        seen["after_button"] = server.api(f"submission/{A}/{BUTTON}")
        seen["fork servers"] = _fork_servers_left(server.pid)
    run_nbgrader(["generate_feedback", A, "--force", "--log-level=WARN"], course, "generate_feedback")
    seen["feedback"] = {p.relative_to(course / "feedback"): p.read_text() for p in (course / "feedback").rglob("*.html")}
    return seen


def _fork_servers_left(pid: int, wait: float = 20.0) -> list[int]:
    """The fork servers the Jupyter server ``pid`` still holds once its keep_server (1 s) and a fork server's
    hang-up (at most 10 s) have passed; [] as soon as there is none."""
    deadline = time.monotonic() + wait
    while (left := children(pid, b"autograder.sandbox.forkserver")) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


@pytest.fixture(scope="module")
def autograded(course, graded):
    """Then nbgrader's own `autograde` of both assignments in the same course, and its export."""
    proc = nbgrader(["autograde", A, "--force", "--log-level=WARN",
                     "--SandboxedExecute.keep_server=30"], course, timeout=900)   # one fork server for the class
    failed = re.findall(r"error processing assignment '[^']+' for student '([^']+)'", proc.stdout + proc.stderr)
    assert failed == [UNREADABLE], proc.stdout + proc.stderr     # nbgrader itself cannot parse that notebook
    run_nbgrader(["autograde", "hw1", "--force", "--log-level=WARN"], course, "autograde hw1", timeout=900)
    rows = export_rows(course)
    return {"scores": {(r["assignment"], r["student_id"]): float(r["score"]) for r in rows},
            "gradebook": _gradebook(course)}


def _hidden_lines() -> list[str]:
    lines = []
    for path in SOURCE.glob("*.ipynb"):
        for cell in nbformat.read(path, as_version=4).cells:
            if "BEGIN HIDDEN TESTS" in cell.source:
                hidden = cell.source.split("BEGIN HIDDEN TESTS")[1].split("END HIDDEN TESTS")[0]
                lines += [ln.strip() for ln in hidden.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    return lines


def _solution_lines(notebook: str) -> list[str]:
    """The reference code of a source notebook (its solution regions), line by line."""
    lines = []
    for cell in nbformat.read(SOURCE / f"{notebook}.ipynb", as_version=4).cells:
        for region in cell.source.split("### BEGIN SOLUTION")[1:]:
            lines += [ln.strip() for ln in region.split("### END SOLUTION")[0].splitlines() if len(ln.strip()) > 12]
    return lines


def _flagged(gradebook: dict, student: str) -> set[str]:
    return {nb for nb, seen in gradebook[student].items() if any(need for _, need in seen["grades"].values())}


def test_grade_leaves_what_nbgrader_autograde_leaves(course, graded):
    from nbgrader.utils import determine_grade
    records = {r.student_id: r for r in graded["result"].records}
    for student in CLASS:
        folder = course / "autograded" / student / A
        stamp = {"timestamp.txt"} if student == "correct-1" else set()
        assert {p.name for p in folder.iterdir()} == {f"{nb}.ipynb" for nb in NOTEBOOKS} | stamp, student
        for notebook in NOTEBOOKS:
            nb = nbformat.read(folder / f"{notebook}.ipynb", as_version=4)
            nbformat.validate(nb)
            scored = {c.metadata.nbgrader.grade_id: determine_grade(c)[0] for c in nb.cells
                      if c.metadata.get("nbgrader", {}).get("grade") and c.metadata.nbgrader.get("points")}
            stored = {g: auto for g, (auto, _) in graded["gradebook"][student][notebook]["grades"].items()}
            assert scored == stored == {g: records[student].cells[g].earned for g in NOTEBOOKS[notebook]}, student
    assert (course / "autograded/correct-1" / A / "timestamp.txt").read_text() == STAMP


def test_only_the_notebook_that_needs_a_person_is_flagged_with_the_reason(graded):
    gradebook, records = graded["gradebook"], {r.student_id: r for r in graded["result"].records}
    assert _flagged(gradebook, "damaged-missing-notebook") == {"ex3_memory"}
    assert _flagged(gradebook, "damaged-invalid-json") == {"ex4_cross_attention"}
    assert _flagged(gradebook, "correct-1") == _flagged(gradebook, "honest-wrong") == set()
    for student in CLASS:
        flagged = _flagged(gradebook, student)
        assert flagged == {nb for nb in NOTEBOOKS if records[student].review_reasons(nb)}, student
        for notebook, seen in gradebook[student].items():
            reasons = records[student].review_reasons(notebook)
            if notebook in flagged:
                assert seen["comments"] and all(reasons[0] in c for c in seen["comments"]), (student, notebook)
            elif student == UNANSWERED and notebook == "ex3_memory":
                assert seen["comments"] and set(seen["comments"]) == {"No response."}    # as nbgrader says it
            else:
                assert set(seen["comments"]) == {""}, (student, notebook)


def test_formgrader_shows_every_submission_graded_with_our_score(graded):
    shown = {s["student"]: s for s in graded["submissions"]}
    assert sorted(shown) == sorted(CLASS)
    for student, row in graded["rows"].items():
        assert shown[student]["autograded"] is True, student
        # formgrader shows nbgrader's raw score: before the late penalty, which nbgrader's export takes off
        assert shown[student]["score"] == float(row["total"]) + float(row["late_penalty"]), student
    assert float(graded["rows"]["correct-1"]["late_penalty"]) == 4.0
    assert shown["damaged-missing-notebook"]["needs_manual_grade"] and not shown["correct-1"]["needs_manual_grade"]
    flagged = {s["student"] for s in graded["notebooks"]["ex3_memory"] if s["needs_manual_grade"]}
    assert "damaged-missing-notebook" in flagged and "correct-1" not in flagged
    status, page = graded["page"]
    assert status == 200 and "marked this notebook for review" in page and "ex3_memory.ipynb is missing" in page
    assert any("ex3_memory.ipynb is missing" in (c["auto_comment"] or "") for c in graded["comments"])


def test_formgrader_shows_the_reason_in_full_and_asks_no_score_of_a_visible_test(graded):
    """In headless Chromium (screenshot: test-artifacts/formgrader-flagged-notebook.png): the note at the top
    was a fenced block cut off at the panel's edge, the checks' lines ran past it too, and every visible-test
    cell (0 points) had full grading controls; the comment box's placeholder goes when the instructor types."""
    seen = graded["in chromium"]
    assert "ex3_memory.ipynb is missing" in seen["note"] and seen["clipped"] == seen["cut"] == 0, seen
    assert sorted(seen["scored"]) == ["ex3_crossover", "ex3_memory"]
    assert "the note at the top of the notebook keeps it" in seen["placeholder"]


def test_formgraders_autograde_button_grades_through_the_sandbox(graded):
    assert graded["button"]["success"] is True, graded["button"]
    assert graded["fork servers"] == []             # none stays in formgrader's Jupyter server after the button
    assert graded["after_button"]["autograded"] is True
    assert graded["after_button"]["score"] == float(graded["rows"]["honest-wrong"]["total"]) < 28


def test_student_markup_is_shown_as_text_never_rendered(course, graded):
    status, page = graded["notes_page"]
    feedback = graded["feedback"][next(p for p in graded["feedback"] if p.parts[0] == "no-scaling"
                                       and p.stem == "ex1_attention")]
    for html in (page, feedback):
        assert status == 200 and "my notes &lt;script&gt;" in html
        assert not any(live in html for live in LIVE)


def test_generate_feedback_shows_no_hidden_test_or_reference_code(graded):
    pages, hidden = graded["feedback"], _hidden_lines()
    assert hidden and len(pages) == len(CLASS) * len(NOTEBOOKS)
    for path, page in pages.items():
        assert "grade_cell(" not in page and "HIDDEN TESTS" not in page, path
        assert not any(line in page for line in hidden), path
    placeholder = pages[next(p for p in pages if p.parts[0] == "damaged-missing-notebook" and p.stem == "ex3_memory")]
    reference = _solution_lines("ex3_memory")
    assert reference and not any(line in placeholder for line in reference)
    assert "ex3_memory.ipynb is missing" in placeholder


def test_nbgrader_autograde_grades_through_the_sandbox(course, graded, autograded):
    scores = autograded["scores"]
    ours = {s: float(row["total"]) for s, row in graded["rows"].items()}
    assert {s: scores[(A, s)] for s in CLASS if s != UNREADABLE} == {s: t for s, t in ours.items() if s != UNREADABLE}
    assert ours["correct-1"] == 28 - 4                       # nbgrader's late penalty, on our scores, both doors
    for student in CLASS:                                    # and cell by cell, on every notebook nbgrader reads
        for notebook, seen in autograded["gradebook"][student].items():
            if (course / "submitted" / student / A / f"{notebook}.ipynb").exists() and student != UNREADABLE:
                assert seen["grades"] == graded["gradebook"][student][notebook]["grades"], (student, notebook)
    for cheat in CHEATS:
        assert scores[(A, cheat)] == ours["honest-wrong"] < 28, cheat
    for path in (course / "autograded").glob(f"*/{A}/*.ipynb"):
        assert "grade_cell(" not in path.read_text(), path          # hidden tests never reach these files
    notes = nbformat.read(course / "autograded/no-scaling" / A / "ex1_attention.ipynb", as_version=4)
    assert any(c.source.startswith("```text\n" + MARKUP) for c in notes.cells)   # kept as text by the door too


def test_nbgrader_autograde_flags_what_grade_flags(graded, autograded):
    for student in ("hostile-exits", "correct-1", UNANSWERED, *CHEATS):
        assert _flagged(autograded["gradebook"], student) == _flagged(graded["gradebook"], student), student
        for notebook, seen in autograded["gradebook"][student].items():    # comments: nbgrader's own and ours
            assert seen["comments"] == graded["gradebook"][student][notebook]["comments"], (student, notebook)
    for notebook in _flagged(autograded["gradebook"], "hostile-exits"):
        assert all(c for c in autograded["gradebook"]["hostile-exits"][notebook]["comments"])


def test_another_assignment_keeps_nbgraders_execution(course, autograded):
    assert autograded["scores"][("hw1", "ada")] == 2.0 and autograded["scores"][("hw1", "bob")] == 0.0
    cell = nbformat.read(course / "autograded/bob/hw1/hw1.ipynb", as_version=4).cells[1]
    assert [o.get("ename") for o in cell.outputs] == ["AssertionError"]      # run in a kernel, by nbgrader
    assert "BEGIN HIDDEN TESTS" in cell.source

