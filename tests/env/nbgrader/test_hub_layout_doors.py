"""nbgrader's doors in the README's Hub layout (issue 38, majors 1 and 2): formgrader runs in the instructor's
home, which names the course in ``~/.jupyter/nbgrader_config.py``; the course is a folder below it, with a
late-penalty plugin (``late.py``) and an absolute ``db_url``, as the README's "On a JupyterHub" sets it up.

Formgrader's Autograde button there could not import ``late`` and failed for every student, and the failure
removed the student's autograded notebooks, which ``grade --resume`` did not put back. After the button
regraded a renamed notebook (``ex1_attention (1).ipynb``) the gradebook said one total and grades.csv
another, and ``grade --resume`` said "already complete". One class, graded once, then each door."""
import re
import subprocess
import sys

import pytest

from batch_helpers import export_gradebook, make_class, read_csv
from formgrader_helpers import formgrader
from nbgrader_fast import nbgrader, run_nbgrader

A = "ch04_attention"
LATE, RENAMED, BROKEN, EDITED = "late-ada", "renamed-bob", "broken-cy", "edited-di"
DUE = "2026-11-01 08:00:00 UTC"
LATE_PLUGIN = ("from nbgrader.plugins import BasePlugin\n\n\nclass SubMarks(BasePlugin):\n"
               "    def late_submission_penalty(self, student_id, score, total_seconds_late):\n"
               "        return round(total_seconds_late / 3600)\n")


def _grade(course, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", "grade", "--course", str(course), *args],
                          capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """/home/instructor with the course in /home/instructor/course, graded once by `grade`."""
    home = tmp_path_factory.mktemp("instructor")
    course = make_class(home, [], custom={LATE: {}, RENAMED: {"causal_mask": "def causal_mask(n):\n    "
                                                                  "import numpy as np\n    return np.zeros((n, n))\n"},
                                          BROKEN: {}, EDITED: {}})
    (course / "submitted" / LATE / A / "timestamp.txt").write_text("2026-11-01 10:00:00.000000 UTC")  # 2 h late
    mine = course / "submitted" / RENAMED / A
    (mine / "ex1_attention.ipynb").rename(mine / "ex1_attention (1).ipynb")     # a browser's second download
    (course / "late.py").write_text(LATE_PLUGIN)
    config = (course / "nbgrader_config.py").read_text()
    config = config.replace('"sqlite:///gradebook.db"', f'"sqlite:///{course}/gradebook.db"')  # as the README says
    (course / "nbgrader_config.py").write_text(config + 'c.AssignLatePenalties.plugin_class = "late.SubMarks"\n')
    run_nbgrader(["db", "assignment", "add", A, f"--duedate={DUE}", "--log-level=WARN"], course, "db assignment add")
    run_nbgrader(["generate_assignment", A, "--force", "--log-level=WARN"], course, "generate_assignment")
    graded = _grade(course)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    return {"home": home, "course": course, "rows": _rows(course)}


def _rows(course) -> dict[str, dict]:
    return {r["student_id"]: r for r in read_csv(course / "grading/grades.csv")}


def _autograded(course, student) -> list[str]:
    folder = course / "autograded" / student / A
    return sorted(p.name for p in folder.glob("*.ipynb")) if folder.is_dir() else []


@pytest.fixture(scope="module")
def buttons(hub, tmp_path_factory):
    """Formgrader's Autograde button, in the instructor's home, on the late and the renamed submission."""
    with formgrader(hub["course"], tmp_path_factory.mktemp("formgrader"), home=hub["home"]) as server:
        pressed = {s: server.api(f"submission/{A}/{s}/autograde", "POST") for s in (LATE, RENAMED)}
    return {"pressed": pressed, "export": export_gradebook(hub["course"])}


def test_the_autograde_button_in_the_instructors_home_loads_the_courses_late_plugin(hub, buttons):
    late = buttons["pressed"][LATE]
    assert late["success"] is True, late.get("error", "")[-2000:]
    row = hub["rows"][LATE]
    assert float(row["late_penalty"]) == 8.0                       # 2 h late: 2 points off each of 4 notebooks
    assert buttons["export"][LATE] == float(row["total"])          # the button applied the same penalty
    assert len(_autograded(hub["course"], LATE)) == 4


def test_every_door_grades_a_renamed_notebook_as_the_notebook_it_stands_for(hub, buttons):
    renamed = buttons["pressed"][RENAMED]
    assert renamed["success"] is True, renamed.get("error", "")[-2000:]
    row = hub["rows"][RENAMED]
    assert 0 < float(row["ex1_attention"]) and float(row["total"]) < 28
    assert buttons["export"][RENAMED] == float(row["total"])        # the gradebook said 10 where grades.csv said 18
    assert "ex1_attention.ipynb" in _autograded(hub["course"], RENAMED)       # formgrader can open it


def test_a_failed_door_loses_nothing_that_resume_does_not_put_back(hub, buttons, monkeypatch):
    """`nbgrader autograde` run from the home, with a plugin name mistyped on its command line, fails for the
    student and removes the autograded notebooks `grade` wrote; `grade --resume` puts them back and says so.
    Then a gradebook whose automatic scores are not the record's (as the button left a renamed notebook's):
    `grade --resume` says so and writes the record's back."""
    course = hub["course"]
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(hub["home"] / ".jupyter"))      # the home names the course
    failed = nbgrader(["autograde", A, "--force", f"--student={BROKEN}", "--AssignLatePenalties.plugin_class=late.Typo"],
                      hub["home"], timeout=600)
    assert failed.returncode != 0 and _autograded(course, BROKEN) == []        # nbgrader removed the folder
    _zero_cell(course, EDITED, "ex2_causal")
    resumed = _grade(course, "--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert len(_autograded(course, BROKEN)) == 4
    assert re.search(r"1 submission had lost its autograded notebooks .*regraded to put them back: '?broken-cy",
                     resumed.stdout), resumed.stdout
    said = [line for line in resumed.stderr.splitlines() if "other automatic scores" in line]
    assert len(said) == 1 and EDITED in said[0] and "ex2_causal 0" in said[0], resumed.stderr
    assert export_gradebook(course) == {s: float(r["total"]) for s, r in _rows(course).items()}


def _zero_cell(course, student, grade_id) -> None:
    from autograder.gradebook.nbgrader_api import nbgrader_api
    with nbgrader_api().Gradebook(f"sqlite:///{course / 'gradebook.db'}", "attention-course") as gb:
        for notebook in gb.find_submission(A, student).notebooks:
            for grade in notebook.grades:
                if grade.name == grade_id:
                    grade.auto_score = 0.0
        gb.db.commit()
