"""autograder.course.settings: the course's settings read (never run), its assignments, its student and gradebook."""
import subprocess
import sys

import pytest

from autograder.course import resources
from autograder.course.settings import (DEFAULT_COURSE_ID, assignments, choose_assignment, find_course,
                                       infer_assignment, infer_student, load_course, resolve_db_url, unusable_settings)
from autograder.grading.seeds import student_seed
from conftest import ROOT


def _course(tmp_path, config: str | None, names=("ch04_attention",)):
    tmp_path.mkdir(parents=True, exist_ok=True)
    if config is not None:
        (tmp_path / "nbgrader_config.py").write_text(config)
    for name in names:
        (tmp_path / "source" / name).mkdir(parents=True)
        (tmp_path / "source" / name / "a.ipynb").write_text("{}")
    return tmp_path


def test_bundled_course_reads_its_settings_without_notes():
    course = load_course(ROOT)
    assert course.course_id == "attention-course" and course.notes == ()
    assert course.db_url == f"sqlite:///{ROOT / 'gradebook.db'}"       # relative to the course, as nbgrader
    assert course.setting("CourseDirectory", "assignment_id") is None   # no pinned assignment
    assert assignments(ROOT) == ["ch04_attention"]


def test_config_is_read_never_run(tmp_path):
    marker = tmp_path / "ran"
    config = (f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\nc = get_config()\n"
              "c.CourseDirectory.course_id = 'ml-101'\nc.CourseDirectory.db_url = 'sqlite:///db/gb.sqlite'\n"
              "c.AssignLatePenalties.plugin_class = 'late.SubMarks'\nc.Exchange.root = os.environ['X']\n")
    course = load_course(_course(tmp_path, config))
    assert not marker.exists()
    assert course.course_id == "ml-101" and course.db_url == f"sqlite:///{tmp_path / 'db/gb.sqlite'}"
    assert course.setting("AssignLatePenalties", "plugin_class") == "late.SubMarks"
    assert [n for n in course.notes if "c.Exchange.root is not a plain value" in n]
    assert course.unreadable == ("Exchange.root",)


@pytest.mark.parametrize("config, says", [
    (None, "no nbgrader_config.py"),
    ("c = get_config(\n", "could not read"),
    ("c = get_config()\nc.CourseDirectory.db_url = 3\n", "not a string"),
    ("#" * (1 << 20) + "\nc.CourseDirectory.course_id = 'late'\n", "larger than"),
])
def test_missing_or_broken_config_falls_back_with_a_note(tmp_path, config, says):
    course = load_course(_course(tmp_path, config))
    assert course.course_id == DEFAULT_COURSE_ID and course.db_url == f"sqlite:///{tmp_path / 'gradebook.db'}"
    assert any(says in n for n in course.notes), course.notes
    assert any("course_id" in n for n in course.notes) or "db_url" in says


def test_db_urls_resolve_as_nbgrader_does(tmp_path):
    assert resolve_db_url("sqlite:////abs/gb.db", tmp_path) == "sqlite:////abs/gb.db"
    assert resolve_db_url("sqlite:///gb.db", tmp_path) == f"sqlite:///{tmp_path / 'gb.db'}"
    assert resolve_db_url("postgresql://h/db", tmp_path) == "postgresql://h/db"
    assert resolve_db_url(None, tmp_path) == f"sqlite:///{tmp_path / 'gradebook.db'}"


def test_assignment_defaults_to_the_only_one(tmp_path):
    assert choose_assignment(_course(tmp_path / "one", "")) == "ch04_attention"
    with pytest.raises(ValueError, match=r"2 assignments \(a1, a2\): choose one with --assignment"):
        choose_assignment(_course(tmp_path / "two", "", names=("a1", "a2")))
    with pytest.raises(ValueError, match="no assignment found"):
        choose_assignment(_course(tmp_path / "none", "", names=()))
    with pytest.raises(ValueError, match="plain folder name"):
        choose_assignment(tmp_path, "../x")
    (tmp_path / "bare" / "submitted" / "ada" / "hw1").mkdir(parents=True)
    assert choose_assignment(tmp_path / "bare") == "hw1"          # no source/: what was submitted


def test_a_mistyped_assignment_and_a_folder_that_is_no_course_are_named():
    """A mistyped --assignment names the course's assignments (it said "no submissions found"); --course at
    a folder that is not a course says so and never suggests `init --merge` there (which would make it one)."""
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp:
        course = _course(Path(tmp) / "c", "", names=("ch04_attention", "hw1"))
        with pytest.raises(ValueError, match=r"--assignment ch04_atention: the course .* has no such assignment .*"
                                             r"its assignments: ch04_attention, hw1"):
            choose_assignment(course, "ch04_atention")
        assert choose_assignment(course, "hw1") == "hw1"
        with pytest.raises(ValueError, match=r"is not a course folder \(it has no nbgrader_config.py\)") as err:
            choose_assignment(Path(tmp))
        assert "--merge" not in str(err.value)


def test_student_and_assignment_from_the_layout(tmp_path):
    course = _course(tmp_path, "", names=("a1", "a2"))
    folder = course / "submitted" / "ada" / "a2"
    folder.mkdir(parents=True)
    (folder / "x.ipynb").write_text("{}")
    assert infer_assignment(folder / "x.ipynb", course) == "a2" and infer_student(folder, "a2") == "ada"
    assert infer_student(tmp_path / "loose.ipynb", "a2") == "anonymous"
    assert find_course(folder / "x.ipynb") == course
    assert find_course(tmp_path.parent) == resources.packaged_course()


def test_seeds_are_stable_for_a_course_assignment_and_student():
    assert student_seed("ada") == 367662075938595968                 # a re-grade draws the same cases
    assert student_seed("ada", "attention-course", "ch04_attention") == student_seed("ada")
    assert student_seed("ada", "c2", "a2") == 13588726520246289613


def test_grade_cli_without_assignment_explains_several(tmp_path):
    course = _course(tmp_path, "", names=("a1", "a2"))
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "--course", str(course)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "choose one with --assignment" in proc.stderr


COMPUTED = ("import os\nc = get_config()\nHERE = os.path.dirname(os.path.abspath(__file__))\n"
            "c.CourseDirectory.db_url = 'sqlite:///' + os.path.join(HERE, 'gb2.db')\n"
            "c.CourseDirectory.submitted_directory = os.path.join('subs')\n")


def test_computed_path_settings_are_named_with_what_to_do(tmp_path):
    course = load_course(_course(tmp_path, COMPUTED))
    problems = unusable_settings(course)
    assert [p.split(" in ")[0] for p in problems] == ["c.CourseDirectory.submitted_directory",
                                                      "c.CourseDirectory.db_url"]
    assert all("is computed, not a plain value" in p and "make it a plain string in nbgrader_config.py" in p
               for p in problems)
    assert problems[1].endswith("or pass --gradebook URL")
    assert [p.split(" in ")[0] for p in unusable_settings(course, gradebook_given=True)] == [
        "c.CourseDirectory.submitted_directory"]


def test_plain_folders_other_than_the_graders_are_refused(tmp_path):
    config = ("c = get_config()\nc.CourseDirectory.submitted_directory = 'subs'\n"
              "c.CourseDirectory.root = '/elsewhere'\n")
    problems = unusable_settings(load_course(_course(tmp_path, config)))
    assert any("submitted_directory" in p and "'subs'" in p and str(tmp_path / "submitted") in p for p in problems)
    assert any("c.CourseDirectory.root" in p and "--course /elsewhere" in p for p in problems)
    assert unusable_settings(load_course(ROOT)) == []


def test_grade_stops_on_a_computed_gradebook_before_grading(tmp_path):
    from autograder.run.batch import grade_batch
    course = _course(tmp_path / "c", COMPUTED.replace("c.CourseDirectory.submitted_directory", "X"))
    (course / "submitted" / "ann" / "ch04_attention").mkdir(parents=True)
    with pytest.raises(ValueError, match=r"c.CourseDirectory.db_url .* is computed.*--gradebook URL"):
        grade_batch(course=course, out=tmp_path / "out", workers=1, progress=False)
    assert not (tmp_path / "out").exists() and not (course / "gradebook.db").exists()


def test_inits_next_steps_are_the_readmes_semester_with_this_interpreter():
    """init's "Next:" runs the semester the docs tell (docs/how-to/semester.md, and the README's five steps),
    in its order, with the interpreter that has nbgrader (a bare `nbgrader` is not on the PATH outside the venv)."""
    import re
    import sys
    from pathlib import Path
    from autograder.course.create import next_steps
    how_to = (ROOT / "docs" / "how-to" / "semester.md").read_text()
    semester = how_to.split("## The commands")[1].split("```")[1]
    readme = (ROOT / "README.md").read_text()
    five_steps = "".join(readme.split("## For instructors, in five steps")[1].split("\n## ")[0].split("```")[1::2])
    steps = ["generate_assignment ch04_attention --force", "release_assignment", "watch --course .",
             "db assignment add", "collect ch04_attention", "grade --course .", "jupyter lab",
             "grade --course . --resume", "collect --update ch04_attention", "nbgrader export", "release_feedback"]
    text = next_steps(Path("/tmp/course")).replace(f"{sys.executable} -m nbgrader", "nbgrader")
    for source in (semester, five_steps, text):
        at = [source.index(step) for step in steps]
        assert at == sorted(at), source
    assert "c.Exchange.root" in text and "/etc/jupyter/nbgrader_config.py" in text
    text = next_steps(Path("/tmp/course"))
    commands = [line.strip() for line in text.splitlines()[2:] if not line.strip().startswith("#")]
    assert commands[0].startswith(f"export PATH={Path(sys.executable).parent}:")     # where nbgrader finds alembic
    assert all(c.startswith(sys.executable) for c in commands[1:]), commands
    assert not re.search(r"^\s*nbgrader ", text, re.M)


def test_the_course_is_found_as_nbgrader_finds_it_from_the_instructors_home(tmp_path, monkeypatch, capsys):
    """On the README's Hub the instructor's home names the course in ~/.jupyter/nbgrader_config.py
    (c.CourseDirectory.root), as nbgrader's commands and formgrader read it; the grader ignored it, and from
    the home suggested running init on the home folder itself."""
    from autograder.__main__ import main
    from autograder.course.settings import default_course
    from batch_helpers import make_class
    home = tmp_path / "instructor"
    course = make_class(home, [])
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(home / ".jupyter"))
    monkeypatch.chdir(home)
    assert default_course() == home                                           # nothing names it: the folder
    assert main(["grade"]) == 1
    said = capsys.readouterr().err
    assert f"{home} is not a course folder" in said and "c.CourseDirectory.root in ~/.jupyter" in said
    assert f"init {home}" not in said and "init COURSE" in said               # never init on the home itself
    (home / ".jupyter").mkdir()
    (home / ".jupyter/nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.root = {str(course)!r}\n")
    assert default_course() == course
    (home / "nbgrader_config.py").write_text("c = get_config()\nc.CourseDirectory.root = 'elsewhere'\n")
    assert default_course() == home / "elsewhere"                             # the working folder's wins, as in nbgrader
    (home / "nbgrader_config.py").unlink()
    assert main(["grade", "--workers", "1"]) == 1                             # the course's, where no one handed in
    assert f"expected folders {course}/submitted/<student>/ch04_attention/" in capsys.readouterr().err
