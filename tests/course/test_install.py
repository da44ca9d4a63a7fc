"""The course as package data (autograder.course.resources) and `init`, which lays out a course anywhere."""
import re
import subprocess
import sys

import pytest

from autograder.course import resources
from autograder.course.create import CourseExists, init_course, next_steps
from autograder.course.settings import load_course
from conftest import RELEASE, ROOT, SOURCE


def _files(folder, pattern):
    return {p.name: p.read_bytes() for p in sorted(folder.glob(pattern))}


def test_packaged_course_is_the_repository_course():
    """In a checkout the package data are the tracked files themselves (links), never a stale copy."""
    assert resources.notebooks("source") == _files(SOURCE, "*.ipynb") != {}
    assert resources.notebooks("release") == _files(RELEASE, "*.ipynb") != {}
    assert resources.config_template() == (ROOT / "nbgrader_config.py").read_text()
    fixtures = resources.fixture_sources()
    assert fixtures == {p.stem: p.read_text() for p in sorted((ROOT / "tests/fixtures/impl").glob("[!_]*.py"))}
    assert "no_scaling" in fixtures
    attacks = resources.attack_sources()
    assert attacks == {p.stem: p.read_text() for p in sorted((ROOT / "tests/adversarial").glob("[!_]*.py"))}


def test_package_data_in_pyproject_covers_every_packaged_file():
    """The globs that put files in the wheel match every file the resources module reads."""
    import tomllib
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["autograder"]
    base = ROOT / "autograder"
    matched = {p for g in globs for p in base.glob(g)}
    wanted = {base / "course_files/nbgrader_config.py",
              *(base / "course_files/source/ch04_attention" / n for n in resources.notebooks("source")),
              *(base / "course_files/release/ch04_attention" / n for n in resources.notebooks("release")),
              *(base / "course_files/fixtures" / f"{n}.py" for n in resources.fixture_sources()),
              *(base / "course_files/adversarial" / f"{n}.py" for n in resources.attack_sources())}
    assert wanted <= matched


def test_no_module_finds_files_from_its_own_location():
    """Installed, the repository is not there: course files come through autograder.course.resources only."""
    offenders = []
    for path in [*(ROOT / "autograder").rglob("*.py"), *(ROOT / "solutions").rglob("*.py")]:
        if "course_files" in path.parts:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"Path\(__file__\)|parents\[\d\]|dirname\(__file__\)", line):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == []


def test_init_lays_out_a_course(tmp_path):
    result = init_course(tmp_path / "course")
    course = result.course
    assert _files(course / "source/ch04_attention", "*.ipynb") == _files(SOURCE, "*.ipynb")
    assert _files(course / "release/ch04_attention", "*.ipynb") == _files(RELEASE, "*.ipynb")
    assert (course / "nbgrader_config.py").read_text() == (ROOT / "nbgrader_config.py").read_text()
    assert (course / "submitted").is_dir() and not any((course / "submitted").iterdir())


def test_a_new_course_s_gradebook_needs_no_alembic_on_the_path(tmp_path, monkeypatch, capsys):
    """init's "Next:" names the venv's interpreter in full, so alembic is not on the PATH when nbgrader's first
    command makes gradebook.db: `init` makes it, stamped as nbgrader stamps one; a course merged into or forced
    over keeps whatever gradebook it has (none is made afresh)."""
    import sqlite3

    import nbgrader.api

    from autograder.__main__ import main
    course = tmp_path / "c"
    assert main(["init", str(course)]) == 0 and "gradebook.db" in capsys.readouterr().out
    with sqlite3.connect(course / "gradebook.db") as db:       # nbgrader's whole schema, as its commands read it
        assert {"alembic_version", "assignment", "grade", "comment"} <= {
            row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", lambda: pytest.fail("nbgrader ran alembic"))
    with nbgrader.api.Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment("ch04_attention")
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "nbgrader_config.py").write_text("c = get_config()\n")
    assert main(["init", str(tmp_path / "m"), "--merge"]) == 0
    (course / "gradebook.db").unlink()
    assert main(["init", str(course), "--force"]) == 0
    assert not (tmp_path / "m" / "gradebook.db").exists() and not (course / "gradebook.db").exists()


def test_init_refuses_an_existing_course_unless_told(tmp_path):
    course = init_course(tmp_path / "c").course
    (course / "nbgrader_config.py").write_text("c = get_config()\nc.CourseDirectory.course_id = 'mine'\n")
    with pytest.raises(CourseExists, match="--merge.*--force"):
        init_course(course)
    with pytest.raises(CourseExists, match="already holds source/ch04_attention"):
        init_course(course, merge=True)
    assert "'mine'" in (course / "nbgrader_config.py").read_text()
    init_course(course, force=True)
    assert "'mine'" not in (course / "nbgrader_config.py").read_text()


def test_init_refuses_a_folder_with_other_files(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(CourseExists, match="already holds files"):
        init_course(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_merge_adds_the_chapter_beside_other_assignments(tmp_path):
    (tmp_path / "source/week1").mkdir(parents=True)
    (tmp_path / "source/week1/intro.ipynb").write_text("{}")
    config = "c = get_config()\nc.CourseDirectory.course_id = 'ml101'\n"
    (tmp_path / "nbgrader_config.py").write_text(config)
    result = init_course(tmp_path, merge=True)
    merged = (tmp_path / "nbgrader_config.py").read_text()
    assert result.kept == ["nbgrader_config.py"] and merged.startswith(config)       # the course's own lines kept
    settings = load_course(tmp_path).settings           # nbgrader autograde of this chapter: the hardened grader
    assert settings["CourseDirectory"]["course_id"] == "ml101"
    assert "autograder.run.autograde.SandboxedExecute" in settings["Autograde"]["autograde_preprocessors"]
    assert "autograder.run.autograde.HideHiddenTests" in settings["GenerateFeedback"]["preprocessors"]
    assert any("other assignments keep nbgrader's own execution" in n for n in result.notes)
    assert (tmp_path / "source/week1/intro.ipynb").read_text() == "{}"
    assert _files(tmp_path / "source/ch04_attention", "*.ipynb") == _files(SOURCE, "*.ipynb")


def test_merge_leaves_a_course_that_sets_its_own_autograde_steps_as_it_is(tmp_path):
    config = "c = get_config()\nc.Autograde.autograde_preprocessors = ['nbgrader.preprocessors.Execute']\n"
    (tmp_path / "nbgrader_config.py").write_text(config)
    result = init_course(tmp_path, merge=True)
    assert (tmp_path / "nbgrader_config.py").read_text() == config
    assert len(result.notes) == 1 and "SandboxedExecute in place of Execute" in result.notes[0]
    init_course(tmp_path / "again", merge=False)
    again = tmp_path / "again" / "nbgrader_config.py"
    before = again.read_text()
    assert init_course(tmp_path / "again", merge=True, force=True).notes == [] and again.read_text() == before


def test_init_command_prints_the_next_steps(tmp_path):
    run = [sys.executable, "-m", "autograder", "init", str(tmp_path / "c")]
    first = subprocess.run(run, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert next_steps(tmp_path / "c") in first.stdout and "grade --course ." in first.stdout
    again = subprocess.run(run, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert again.returncode == 1 and "Traceback" not in again.stderr and "--merge" in again.stderr


@pytest.mark.parametrize("command", [["grade", "--course", "{tmp}/nowhere"], ["grade", "--course", "{tmp}"],
                                     ["release", "--course", "{tmp}"]])
def test_a_missing_course_names_the_command_that_makes_it(tmp_path, command):
    args = [a.format(tmp=tmp_path) for a in command]
    proc = subprocess.run([sys.executable, "-m", "autograder", *args], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "python -m autograder init" in proc.stderr, proc.stderr


def test_reading_a_notebook_compiles_no_grammar():
    """nbformat (every nbgrader command, every grade) loads without rfc3987-syntax, which jsonschema 4.24+
    imports and which compiles an Earley grammar on import: 2.4 s of CPU a process (pyproject pins jsonschema)."""
    probe = "import sys, nbformat, jsonschema; print(sorted(m for m in sys.modules if m.startswith(('rfc3987', 'lark'))))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert loaded.stdout.strip() == "[]", f"importing nbformat loaded {loaded.stdout.strip()}"


def test_the_courses_own_nbgrader_steps_take_nbconverts_config_without_a_warning(caplog):
    """nbconvert's exporters configure NbConvertBase.display_data_priority, which nbgrader's preprocessor
    base declares unconfigurable: each of our steps made traitlets warn on every generate_feedback."""
    import importlib
    import logging

    from nbconvert.exporters import HTMLExporter
    from traitlets.config import Config

    from autograder.course.settings import load_course
    from conftest import ROOT
    doors = load_course(ROOT).settings
    steps = [s for s in (*doors["Autograde"]["autograde_preprocessors"], *doors["GenerateFeedback"]["preprocessors"])
             if s.startswith("autograder.")]
    assert len(steps) >= 4, steps
    config = Config(HTMLExporter().default_config)
    with caplog.at_level(logging.WARNING):
        for step in steps:
            module, _, name = step.rpartition(".")
            getattr(importlib.import_module(module), name)(config=config)
    assert not [r.getMessage() for r in caplog.records if "not recognized" in r.getMessage()]
