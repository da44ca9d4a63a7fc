"""Every error path of `grade` and `init` is one clear line saying what is wrong and what to do, never a
traceback or its fragments; and nothing is created by a run that was refused (a mistyped gradebook)."""
import sqlite3
import subprocess
import sys

import nbformat
import pytest

from autograder.__main__ import main
from autograder.grading.chapter import _points_fix
from batch_helpers import make_class
from conftest import ROOT

pytestmark = pytest.mark.filterwarnings("ignore:.*not in session")


@pytest.fixture
def course(tmp_path):
    return make_class(tmp_path, ["correct-1"])


def _error(capsys, argv) -> str:
    """Run the CLI; the one error line it printed (it must print exactly one, and fail)."""
    code = main(argv)
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 1 and len(errors) == 1 and "Traceback" not in err and 'File "' not in err, err
    return errors[0]


def _grade(course, *args):
    return ["grade", "--course", str(course), "--workers", "1", *args]


def test_a_gradebook_url_without_a_scheme_names_the_url_to_write(course, tmp_path, capsys):
    line = _error(capsys, _grade(course, "--gradebook", str(tmp_path / "gb.db")))
    assert f"--gradebook {tmp_path / 'gb.db'} is not a database URL" in line
    assert f"sqlite:///{tmp_path / 'gb.db'}" in line and not (course / "grading").exists()


def test_postgres_is_spelled_postgresql(course, capsys):
    line = _error(capsys, _grade(course, "--gradebook", "postgres://me@db.example/course"))
    assert "SQLAlchemy knows no database kind 'postgres'" in line and "postgresql://" in line


def test_a_missing_database_driver_says_what_to_install_into_which_python(course, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)             # as where the postgres extra is not installed
    line = _error(capsys, _grade(course, "--gradebook", "postgresql://me@db.example/course"))
    assert "the database driver 'psycopg' for postgresql is not installed" in line
    assert f"{sys.executable} -m pip install 'attention-course[postgres]'" in line


def test_a_url_for_psycopg2_where_psycopg_3_is_installed_names_the_url_to_write(course, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg2", None)
    line = _error(capsys, _grade(course, "--gradebook", "postgresql+psycopg2://me@db.example/course"))
    assert "psycopg 3 is (the postgres extra): write the URL as postgresql+psycopg://me@db.example/course" in line


@pytest.mark.parametrize("out, why", [("/proc/x", "No such file or directory"),
                                      ("{course}/nbgrader_config.py", "is a file, not a folder"),
                                      ("{course}/nbgrader_config.py/sub", "is a file, not a folder")])
def test_an_output_folder_that_cannot_be_written_is_named_with_why(course, capsys, out, why):
    out = out.format(course=course)
    line = _error(capsys, _grade(course, "--out", out))
    assert line.startswith(f"error: cannot write the output folder {out} (") and why in line
    assert "choose a folder you can write with --out" in line


def test_a_mistyped_gradebook_is_refused_and_nothing_is_created(course, tmp_path, capsys):
    typo = tmp_path / "gradbook.db"
    line = _error(capsys, _grade(course, "--gradebook", f"sqlite:///{typo}?mode=ro"))
    assert f"the gradebook {typo} (--gradebook) does not exist" in line and "--create-gradebook" in line
    line = _error(capsys, _grade(course, "--gradebook", f"sqlite:///{tmp_path / 'nowhere' / 'gb.db'}"))
    assert f"the folder {tmp_path / 'nowhere'} does not exist" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["course"]      # no file, no lock, no folder


@pytest.mark.parametrize("earlier", ["grading/grades.csv",
                                     "autograded/correct-1/ch04_attention/ex1_attention.ipynb"])
def test_a_course_gradebook_gone_missing_is_never_started_afresh(course, capsys, earlier):
    """gradebook.db moved away (a copy of the course, a mistyped db_url) after a run used one: `grade` and
    `--resume` stop, naming the file and --create-gradebook, rather than lose the manual grades and due dates."""
    (course / earlier).parent.mkdir(parents=True)
    (course / earlier).write_text("{}")
    for extra in ((), ("--resume",)):
        line = _error(capsys, _grade(course, *extra))
        assert f"the course's gradebook {course / 'gradebook.db'} (c.CourseDirectory.db_url in " in line
        assert "does not exist" in line and "--create-gradebook to start a new, empty one" in line
    assert not (course / "gradebook.db").exists()
    from autograder.gradebook.url import check_course_gradebook
    check_course_gradebook(f"sqlite:///{course / 'gradebook.db'}", course=course, out=course / "grading",
                           assignment="ch04_attention", create=True, what="db_url")      # --create-gradebook


@pytest.mark.parametrize("lateness, refused", [("0", True), ("unknown", False)])
def test_an_empty_gradebook_beside_an_earlier_runs_scores_is_a_lost_gradebook(course, capsys, lateness, refused):
    """gradebook.db moved away, then any nbgrader command (formgrader, `db assignment add`) made a new, empty one
    where db_url points: `--resume` wrote into it as if nothing were lost. An earlier grades.csv whose lateness the
    gradebook gave says one held the class; one that says "unknown" (its gradebook could not be written) does not."""
    from autograder.gradebook.nbgrader_api import nbgrader_api, stamp_new_sqlite
    (course / "grading").mkdir()
    (course / "grading/grades.csv").write_text(f"student_id,total,seconds_late\ncorrect-1,28,{lateness}\n")
    stamp_new_sqlite(f"sqlite:///{course / 'gradebook.db'}")                      # as nbgrader makes one (its
    nbgrader_api().Gradebook(f"sqlite:///{course / 'gradebook.db'}", "attention-course").close()   # alembic's stamp)
    from autograder.gradebook.url import check_course_gradebook
    check = lambda create: check_course_gradebook(f"sqlite:///{course / 'gradebook.db'}", course=course,  # noqa: E731
                                                  out=course / "grading", assignment="ch04_attention", create=create,
                                                  what="db_url")
    if refused:
        line = _error(capsys, _grade(course, "--resume"))
        assert f"the course's gradebook {course / 'gradebook.db'} (c.CourseDirectory.db_url in " in line
        assert "holds no submission of ch04_attention" in line and "--create-gradebook" in line
        assert sorted(p.name for p in (course / "grading").iterdir()) == ["grades.csv"]       # nothing graded
    else:
        check(False)
    check(True)                                                                     # --create-gradebook


def test_create_gradebook_starts_one_and_a_query_is_no_part_of_its_name(course, tmp_path, capsys):
    assert main(_grade(course, "--gradebook", f"sqlite:///{tmp_path / 'new.db'}?mode=rwc",
                       "--create-gradebook")) == 0
    assert (tmp_path / "new.db").stat().st_size > 0
    assert not [p for p in tmp_path.iterdir() if "?" in p.name]


def test_a_locked_gradebook_is_one_line_saying_who_may_hold_it_and_what_next(course, capsys):
    holder = sqlite3.connect(course / "gradebook.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")             # as a program in the middle of writing to it
    try:
        line = _error(capsys, _grade(course))
    finally:
        holder.close()
    assert f"{course / 'gradebook.db'} is locked by another program" in line and "grade --resume" in line
    assert (course / "grading" / "grades.csv").exists()          # the rest is written
    assert main(_grade(course, "--resume")) == 0                 # and --resume writes the gradebook


def test_another_assignment_of_the_course_is_not_this_chapter(course, capsys):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("assert True", metadata={"nbgrader": {
        "grade": True, "grade_id": "q1", "points": 2, "solution": False, "locked": True, "schema_version": 3}})]
    for folder in (course / "source" / "ps1", course / "submitted" / "ann" / "ps1"):
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / "problem1.ipynb")
    line = _error(capsys, _grade(course, "--assignment", "ps1"))
    assert line == ("error: ps1 is not this chapter: its source/ps1/ holds problem1.ipynb, and this grader grades "
                    "only the attention chapter (ex1_attention, ex2_causal_mask, ex3_memory, ex4_cross_attention): "
                    "use `nbgrader autograde ps1` for it")


def _points_on_a_visible_cell(course) -> None:
    """Points on ex3's visible-test cell, which no check grades."""
    path = course / "source" / "ch04_attention" / "ex3_memory.ipynb"
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "ex3_crossover_visible")
    cell.metadata["nbgrader"]["points"] = 3
    nbformat.write(nb, path)


def test_points_advice_names_the_commands_of_the_install_at_hand(course, capsys):
    _points_on_a_visible_cell(course)
    line = _error(capsys, _grade(course))
    assert "do not match" in line and f"{sys.executable} -m autograder release --course {course}" in line
    assert "make release" not in line and "rubric.py" not in line        # a course that is not this repository
    assert "`make release`" in _points_fix(ROOT, "ch04_attention")     # the repository has its Makefile


def test_release_refuses_points_that_grade_would_refuse(course, capsys):
    """An instructor who puts points on a cell no check grades learns it at `release`, before students are
    handed a notebook that `grade` will not grade by; release/ is left as it was."""
    _points_on_a_visible_cell(course)
    before = {p.name: p.read_bytes() for p in (course / "release" / "ch04_attention").iterdir()}
    line = _error(capsys, ["release", "--course", str(course), "--execute-source"])
    assert "ex3_memory.ipynb cell ex3_crossover_visible is worth 3 points but the rubric has no checks for it" in line
    assert {p.name: p.read_bytes() for p in (course / "release" / "ch04_attention").iterdir()} == before


def test_init_prints_the_interpreter_that_ran_it(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "autograder", "init", str(tmp_path / "c")], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"{sys.executable} -m autograder grade --course ." in proc.stdout
    assert "\n  python -m autograder" not in proc.stdout


def test_the_gradebook_writer_fails_in_one_line_of_its_own(tmp_path):
    from autograder.gradebook.client import _why
    from autograder.gradebook.writer import failure
    from sqlalchemy.exc import OperationalError
    locked = OperationalError("INSERT ...", {}, sqlite3.OperationalError("database is locked"))
    assert failure(locked, f"sqlite:///{tmp_path / 'gb.db'}?mode=ro").startswith(f"{tmp_path / 'gb.db'} is locked")
    noise = "Traceback (most recent call last):\n  File \"x.py\", line 1\ngradebook writer: the reason\n"
    assert _why(noise) == "the reason" and _why("ValueError: x\n") == "could not update the gradebook: ValueError: x"
