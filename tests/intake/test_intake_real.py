"""Real submissions graded honestly: renamed files, byte-order marks, stripped metadata, no release/."""
import codecs
import json
import shutil

import pytest

from autograder.course.view import read_course
from autograder.run.hardened import intake_submission
from autograder.intake import CourseError, expected_cells
from autograder.course.notebooks import strip_hidden_tests
from autograder.samples.synthetic import write_submission
from conftest import NOTEBOOKS, RELEASE, ROOT, SOURCE


@pytest.fixture
def folder(tmp_path):
    return write_submission(RELEASE, SOURCE, tmp_path / "submitted" / "s1" / "ch04_attention")


def _intake(folder, course=ROOT):
    return intake_submission(folder, read_course(course, "ch04_attention"), "s1")


def _notebooks(intake):
    return {c.notebook for c in intake.cells}


@pytest.mark.parametrize("renamed", ["ex1_attention (1).ipynb", "ex1_attention-Copy1.ipynb",
                                     "ex1_attention - Copy.ipynb", "EX1_Attention.ipynb"])
def test_a_renamed_notebook_is_graded_with_a_note(folder, renamed):
    (folder / "ex1_attention.ipynb").rename(folder / renamed)
    intake = _intake(folder)
    assert intake.problems == [] and not intake.needs_review
    assert _notebooks(intake) == set(NOTEBOOKS)
    assert len(intake.notes) == 1 and f"'{renamed}' was graded as ex1_attention.ipynb" in intake.notes[0]


def test_two_copies_are_named_not_guessed(folder):
    (folder / "ex1_attention.ipynb").rename(folder / "ex1_attention (1).ipynb")
    shutil.copy(folder / "ex1_attention (1).ipynb", folder / "ex1_attention-Copy2.ipynb")
    intake = _intake(folder)
    assert "ex1_attention" not in _notebooks(intake)
    [line] = intake.problems
    assert "2 copies" in line and "'ex1_attention (1).ipynb'" in line and "'ex1_attention-Copy2.ipynb'" in line


def test_a_missing_notebook_names_what_was_found(folder):
    (folder / "ex3_memory.ipynb").rename(folder / "my_work.ipynb")
    [line] = _intake(folder).problems
    assert "ex3_memory.ipynb is missing" in line and "'my_work.ipynb'" in line


def test_byte_order_mark_decodes(folder):
    path = folder / "ex2_causal_mask.ipynb"
    path.write_bytes(codecs.BOM_UTF8 + path.read_bytes())
    intake = _intake(folder)
    assert intake.problems == [] and "ex2_causal_mask" in _notebooks(intake)
    assert not any("BEGIN" in c.source or c.source.startswith("#") and "Visible" in c.source for c in intake.cells)


def test_stripped_metadata_gives_one_line_per_notebook(folder):
    for name in ("ex1_attention", "ex2_causal_mask"):
        path = folder / f"{name}.ipynb"
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            cell["metadata"] = {}
        path.write_text(json.dumps(nb))
    intake = _intake(folder)
    lines = intake.problems + intake.notes
    assert len(lines) == 2 and all("lost its nbgrader cell metadata" in line for line in lines)
    assert not intake.needs_review
    assert not any("grade_cell(" in c.source for c in intake.cells)
    assert {"ex1_attention", "ex2_causal_mask"} <= _notebooks(intake)


def test_a_course_without_release_is_compared_with_stripped_source(folder, tmp_path):
    course = tmp_path / "course"
    shutil.copytree(ROOT / "source", course / "source")
    intake = _intake(folder, course)
    assert intake.problems == [] and not intake.needs_review
    assert _notebooks(intake) == set(NOTEBOOKS)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_stripping_source_reproduces_the_release(name):
    from_release = expected_cells(SOURCE / f"{name}.ipynb", RELEASE / f"{name}.ipynb")
    from_source = expected_cells(SOURCE / f"{name}.ipynb", None)
    locked = [g for g, cell in from_release.items() if not cell.meta[1]]
    assert locked and all(from_source[g].text.strip() == from_release[g].text.strip() for g in locked)
    assert any("HIDDEN TESTS" in c for c in _sources(SOURCE / f"{name}.ipynb")) or name == "ex3_memory"


def _sources(path):
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]


def test_hidden_test_regions_are_removed_line_for_line():
    text = "a\n### BEGIN HIDDEN TESTS\nsecret\n### END HIDDEN TESTS\nb"
    assert strip_hidden_tests(text) == "a\nb"


def test_a_course_without_source_is_one_clear_error(folder, tmp_path):
    with pytest.raises(CourseError, match="no source notebooks"):
        _intake(folder, tmp_path / "empty-course")


def test_grading_a_course_without_source_stops_once(tmp_path):
    import subprocess
    import sys
    for student in ("ann", "bob", "cid"):
        (tmp_path / "submitted" / student / "ch04_attention").mkdir(parents=True)
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "--course", str(tmp_path),
                           "--assignment", "ch04_attention"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stderr.count("error:") == 1 and "no source notebooks" in proc.stderr
    assert not (tmp_path / "grading" / "records").exists()


def test_checking_one_renamed_notebook_grades_its_cells(folder, server):
    from autograder.run.hardened import grade_submission
    renamed = folder / "EX2_Causal_Mask (1).ipynb"
    (folder / "ex2_causal_mask.ipynb").rename(renamed)
    record = grade_submission(renamed, course=ROOT, server=server)
    assert record.max_total == 9 and record.total == 9 and not record.needs_review
    assert any("graded as ex2_causal_mask.ipynb" in n for n in record.notes)


def test_a_broken_source_notebook_is_one_clear_course_error(folder, tmp_path):
    course = tmp_path / "course"
    shutil.copytree(ROOT / "source", course / "source")
    (course / "source/ch04_attention/ex3_memory.ipynb").write_text("{not json")
    with pytest.raises(CourseError, match="ex3_memory.ipynb could not be read"):
        _intake(folder, course)
