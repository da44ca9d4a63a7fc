"""Intake of damaged submissions: clear messages, needs_review, graded as far as the code allows."""
import json

import nbformat
import pytest

from autograder.course.view import read_course
from autograder.run.hardened import intake_submission
from autograder.samples.synthetic import write_submission
from conftest import RELEASE, ROOT, SOURCE


@pytest.fixture
def submission(tmp_path):
    return write_submission(RELEASE, SOURCE, tmp_path / "submitted" / "s1" / "ch04_attention")


def _edit(path, fn):
    nb = nbformat.read(path, as_version=4)
    fn(nb)
    nbformat.write(nb, path)


def _cell(nb, grade_id):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _intake(folder):
    return intake_submission(folder, read_course(ROOT, "ch04_attention"))


def test_clean_submission_has_no_problems(submission):
    intake = _intake(submission)
    assert intake.problems == [] and not intake.needs_review
    sources = "\n".join(c.source for c in intake.cells)
    assert "def causal_attention" in sources and "Visible tests" not in sources and "grade_cell" not in sources


def test_edited_test_cell(submission):
    _edit(submission / "ex2_causal_mask.ipynb", lambda nb: setattr(_cell(nb, "ex2_mask_visible"), "source", "pass"))
    intake = _intake(submission)
    assert intake.needs_review
    assert any("locked cell 'ex2_mask_visible' was edited" in p for p in intake.problems)
    assert all("pass" != c.source for c in intake.cells)


def test_deleted_test_cell(submission):
    _edit(submission / "ex1_attention.ipynb", lambda nb: nb.cells.remove(_cell(nb, "ex1_softmax")))
    intake = _intake(submission)
    assert any("the test cell 'ex1_softmax' was deleted" in p for p in intake.problems)


def test_points_inflated(submission):
    _edit(submission / "ex3_memory.ipynb",
          lambda nb: _cell(nb, "ex3_memory").metadata["nbgrader"].update(points=400))
    intake = _intake(submission)
    assert any("nbgrader settings of cell 'ex3_memory' were changed" in p for p in intake.problems)


def test_extra_grade_cell_not_run(submission):
    def add(nb):
        cell = nbformat.v4.new_code_cell("print('free points')")
        cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "points": 50,
                                     "grade_id": "ex9_bonus", "schema_version": 3}
        nb.cells.append(cell)
    _edit(submission / "ex4_cross_attention.ipynb", add)
    intake = _intake(submission)
    assert any("extra grade cell 'ex9_bonus'" in p for p in intake.problems)
    assert all("free points" not in c.source for c in intake.cells)


def test_invalid_json_salvages_code(submission):
    path = submission / "ex2_causal_mask.ipynb"
    path.write_text(path.read_text()[:-200])          # truncated file
    intake = _intake(submission)
    assert any("ex2_causal_mask.ipynb is not valid JSON" in p for p in intake.problems)
    assert any("def causal_attention" in c.source for c in intake.cells if c.notebook == "ex2_causal_mask")


def test_nbformat_3_converted(submission):
    path = submission / "ex4_cross_attention.ipynb"
    nb3 = nbformat.convert(nbformat.read(path, as_version=4), 3)
    path.write_text(json.dumps(nb3))
    intake = _intake(submission)
    assert any("uses nbformat 3" in p for p in intake.problems)
    assert any("def cross_attention" in c.source for c in intake.cells)


@pytest.mark.parametrize("content", [{"cells": "nope", "hello": 1}, {"nbformat": 3, "worksheets": 7},
                                     {"nbformat": "4", "cells": []}])
def test_json_that_is_not_a_notebook_is_said_in_one_line(submission, content):
    """JSON that is not nbformat (no version, a version it does not hold to): one line saying it could not be read
    as a notebook and was not graded. It read "converted to version 4 and graded", then "could not be converted;
    it was not graded"."""
    (submission / "ex1_attention.ipynb").write_text(json.dumps(content))
    said = [p for p in _intake(submission).problems if p.startswith("ex1_attention.ipynb")]
    assert len(said) == 1 and "could not be read as a Jupyter notebook" in said[0], said
    assert "it was not graded" in said[0] and "converted to version 4" not in said[0]


def test_nbformat_3_converted_is_said_once(submission):
    path = submission / "ex4_cross_attention.ipynb"
    path.write_text(json.dumps(nbformat.convert(nbformat.read(path, as_version=4), 3)))
    said = [p for p in _intake(submission).problems if p.startswith("ex4_cross_attention.ipynb")]
    assert said == ["ex4_cross_attention.ipynb uses nbformat 3; it was converted to version 4 and graded."], said


def test_binary_junk_is_not_said_graded(submission):
    """Random bytes: no code is recovered, and the student is not told "recovered from 0 cell(s) and graded"."""
    (submission / "ex3_memory.ipynb").write_bytes(bytes(range(256)) * 64)
    said = [p for p in _intake(submission).problems if "not valid JSON" in p]
    assert said and said[0].endswith("no code could be recovered from it, so it was not graded."), said


def test_undecodable_bytes(submission):
    path = submission / "ex3_memory.ipynb"
    data = path.read_bytes().replace(b"Bytes of one", b"Bytes \xff\xfe of one")
    path.write_bytes(data)
    intake = _intake(submission)
    assert any("bytes that are not UTF-8" in p for p in intake.problems)
    assert any("def attention_memory_bytes" in c.source for c in intake.cells)


def test_missing_notebook(submission):
    (submission / "ex3_memory.ipynb").unlink()
    intake = _intake(submission)
    assert any("ex3_memory.ipynb is missing" in p for p in intake.problems)


def test_oversized_notebook(submission):
    path = submission / "ex1_attention.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="x" * (60 << 20))]
    nbformat.write(nb, path)
    intake = _intake(submission)
    assert any("ex1_attention.ipynb is 6" in p and "outputs were ignored" in p for p in intake.problems)
    assert any("def softmax" in c.source for c in intake.cells)


@pytest.mark.parametrize("part, cell", [
    ("outputs", lambda: nbformat.v4.new_code_cell("x = 1", outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="x" * (3 << 20))])),
    ("markdown", lambda: nbformat.v4.new_markdown_cell("![](data:image/png;base64," + "A" * (3 << 20) + ")")),
    ("code", lambda: nbformat.v4.new_code_cell("DATA = [" + "1, " * (1 << 20) + "]"))], ids=["outputs", "markdown", "code"])
def test_an_oversized_notebook_is_told_what_it_mostly_holds(submission, monkeypatch, part, cell):
    """A notebook over the size limit was always 'mostly outputs', whatever it held (an image pasted into
    markdown, data typed into code); the note says which part is large and what to do about it."""
    import autograder.intake.submission as submission_module
    monkeypatch.setattr(submission_module, "MAX_NOTEBOOK_BYTES", 2 << 20)
    _edit(submission / "ex1_attention.ipynb", lambda nb: nb.cells.append(cell()))
    note = next(p for p in _intake(submission).problems if "ex1_attention.ipynb is 3 MB (limit 2 MB)" in p)
    assert f"mostly {part} ({part} 3." in note and ("outputs were ignored" in note) == (part == "outputs"), note


def test_invalid_json_keeps_markdown_as_prose_never_runs_it(submission):
    """A notebook recovered from broken JSON ran its markdown cells as code, and the page listed the
    student's prose as 'raised SyntaxError'."""
    path = submission / "ex2_causal_mask.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell("My notes: the mask hides the future, I think."))
    path.write_text(nbformat.writes(nb)[:-200])      # truncated file
    intake = _intake(submission)
    assert any("ex2_causal_mask.ipynb is not valid JSON" in p for p in intake.problems)
    mine = [c.source for c in intake.cells if c.notebook == "ex2_causal_mask"]
    assert any("def causal_attention" in s for s in mine) and not any("My notes" in s for s in mine)


def test_nbgrader_checksum_is_nbgraders():
    """intake.compare.nbgrader_checksum is nbgrader's compute_checksum, without nbgrader in a grading process:
    every nbgrader cell of the release carries the checksum generate_assignment wrote, and both agree on it."""
    from nbgrader.utils import compute_checksum
    from autograder.intake.compare import nbgrader_checksum
    seen = 0
    for path in sorted(RELEASE.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if "checksum" not in meta:
                continue
            ours = nbgrader_checksum(cell.source, cell.cell_type, meta["grade_id"], bool(meta.get("grade")),
                                     bool(meta.get("solution")), bool(meta.get("locked")), meta.get("points"))
            assert ours == compute_checksum(cell) == meta["checksum"], (path.name, meta["grade_id"])
            seen += 1
    assert seen >= 12


def test_a_copy_handed_out_before_the_instructor_re_weighted_a_cell_is_no_integrity_problem(submission):
    """Re-weighting a cell after release flagged every student (their copies hold the points of the release
    they fetched); a copy whose checksum is generate_assignment's at those points came from a release, while
    a student's own edit of the points (test_points_inflated) still is one."""
    from nbgrader.utils import compute_checksum

    def released_at_two_points(nb):                # what generate_assignment wrote when ex3_memory was worth 2
        meta = _cell(nb, "ex3_memory").metadata["nbgrader"]
        meta["points"] = 2
        meta["checksum"] = compute_checksum(_cell(nb, "ex3_memory"))
    _edit(submission / "ex3_memory.ipynb", released_at_two_points)
    intake = _intake(submission)
    assert intake.problems == [] and not intake.needs_review
    _edit(submission / "ex3_memory.ipynb", lambda nb: _cell(nb, "ex3_memory").metadata["nbgrader"].update(points=3))
    assert any("nbgrader settings of cell 'ex3_memory' were changed" in p for p in _intake(submission).problems)


@pytest.mark.parametrize("grade_id", ["ex1_softmax", "ex2_mask_visible"])    # a test cell, a read-only one
def test_a_locked_cell_whose_metadata_was_stripped_is_not_said_deleted(submission, grade_id):
    """One locked cell's nbgrader metadata removed (its text intact, the others' metadata kept): the student and
    the instructor read that its metadata is missing, not that the cell was deleted; it is found by its text,
    its tests stand where it stands, and nothing needs a person."""
    notebook = "ex1_attention" if grade_id.startswith("ex1") else "ex2_causal_mask"
    _edit(submission / f"{notebook}.ipynb", lambda nb: _cell(nb, grade_id).metadata.pop("nbgrader"))
    intake = _intake(submission)
    assert not any("deleted" in p for p in intake.problems), intake.problems
    assert any(f"locked cell '{grade_id}' lost its nbgrader metadata (the grade_id is no longer found)" in n
               for n in intake.notes), intake.notes
    assert not intake.needs_review
    assert grade_id != "ex1_softmax" or any(g.grade_id == grade_id for g in intake.grade_cells)


def test_a_locked_cell_whose_grade_id_was_changed_says_so(submission):
    """Its grade_id changed to another (the text intact): said to be changed, with both ids, for a person."""
    _edit(submission / "ex1_attention.ipynb",
          lambda nb: _cell(nb, "ex1_softmax").metadata["nbgrader"].update(grade_id="free_points"))
    intake = _intake(submission)
    assert not any("deleted" in p or "extra grade cell" in p for p in intake.problems), intake.problems
    assert any("grade_id of the locked cell 'ex1_softmax' was changed to 'free_points'" in p for p in intake.problems)
    assert intake.needs_review and any(g.grade_id == "ex1_softmax" for g in intake.grade_cells)
