"""The typed record: totals computed in one place, JSON round trip, one source of points, fingerprints
and --resume regrading records graded by something else."""
import json
import shutil
from dataclasses import replace

import pytest

from autograder import __main__ as cli
from autograder.run.batch import failed_record, grade_batch
from autograder.grading.fingerprint import points_disagreements
from autograder.outputs.csvout import write_grades_csv
from autograder.records import INTERNAL, CheckResult, Finding, OutputError, Record, read_record, write_record
from autograder.grading.rubric import RUBRIC, Item, max_total
from batch_helpers import make_class, read_csv
from conftest import ROOT, SOURCE


def _check(grade_id, check, points, max_points, category="correctness", **kw):
    return CheckResult(grade_id, check, category, points, max_points, points == max_points, "m", **kw)


def _record(**kw):
    checks = [_check("ex1_softmax", "a", 1, 1), _check("ex1_softmax", "b", 0, 2),
              _check("ex2_mask", "c", 2, 2, "masking"), _check("ex4_cross", "d", 0, 1, diagnosis="no-scaling")]
    return Record("ann", checks, assignment="ch04_attention", fingerprint="f", **kw)


def test_totals_come_from_the_checks():
    record = _record()
    assert (record.total, record.max_total) == (3, 6)
    assert {g: (c.earned, c.max) for g, c in record.cells.items()} == {
        "ex1_softmax": (1, 3), "ex2_mask": (2, 2), "ex4_cross": (0, 1)}
    assert record.cells["ex2_mask"].notebook == "ex2_causal_mask"
    assert {n: (s.earned, s.max) for n, s in record.notebooks.items()} == {
        "ex1_attention": (1, 3), "ex2_causal_mask": (2, 2), "ex4_cross_attention": (0, 1)}
    assert (record.categories["correctness"].earned, record.categories["correctness"].max) == (1, 4)
    assert (record.categories["memory"].earned, record.categories["memory"].max) == (0, 0)
    assert record.diagnoses == ["no-scaling"]


def test_json_round_trip_and_stored_totals_are_not_trusted():
    record = _record(notes=["n"], findings=[Finding("i", "ex1_attention", "private", True)], needs_review=True)
    data = json.loads(record.to_json())
    assert data["total"] == 3 and data["max_total"] == 6 and data["cells"]["ex1_softmax"]["max"] == 3
    assert Record.from_json(record.to_json()) == record
    data["total"] = 99                                       # a stored total is derived, never read
    assert Record.from_dict(data).total == 3


def test_an_internal_error_always_needs_review():
    broken = CheckResult("ex1_softmax", "a", "correctness", 0, 1, False, INTERNAL,
                         details={"internal_error": "tb"})
    assert Record("ann", [broken]).needs_review and not _record().needs_review


def test_failed_record_covers_the_whole_rubric():
    record = failed_record("bob", "trouble", assignment="ch04_attention")
    assert record.total == 0 and record.max_total == max_total() == 28 and record.needs_review
    assert all(c.message == "Not graded: trouble" for c in record.checks)


def test_read_record_wants_the_same_assignment_student_and_fingerprint(tmp_path):
    write_record(tmp_path, _record())
    assert read_record(tmp_path, "ann", "ch04_attention") == _record()
    assert read_record(tmp_path, "ann", "ch04_attention", "f") == _record()
    assert read_record(tmp_path, "ann", "ch04_attention", "g") is None
    assert read_record(tmp_path, "ann", "other") is None


def test_grades_csv_never_mixes_maxima(tmp_path):
    one, other = _record(), replace(_record(), student_id="bob", checks=_record().checks[:2])
    with pytest.raises(OutputError, match="mix maxima 3 \\(bob\\), 6 \\(ann\\)"):
        write_grades_csv(tmp_path / "grades.csv", [one, other])
    assert not (tmp_path / "grades.csv").exists()


# --- one source of points -----------------------------------------------------------------------

def _set_points(source_dir, notebook, grade_id, points):
    path = source_dir / f"{notebook}.ipynb"
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == grade_id:
            cell["metadata"]["nbgrader"]["points"] = points
    path.write_text(json.dumps(nb, indent=1))


def test_rubric_and_source_notebooks_agree_on_points():
    """As the chapter ships, every cell's points are its checks' weights: a weight is a point."""
    from autograder.course.view import read_course
    from autograder.grading.rubric import RUBRIC, cell_max
    assert points_disagreements(SOURCE) == []
    points = read_course(SOURCE.parent.parent, SOURCE.name).cell_points
    assert {g: points[g] for g in RUBRIC} == {g: cell_max(g) for g in RUBRIC}


def test_a_cell_worth_points_that_no_check_grades_is_caught(tmp_path):
    """Points the course gives a cell are the course's (the checks share them), but points on a cell no
    check grades (a visible-test cell) would be points nobody can earn."""
    copy = tmp_path / "source"
    shutil.copytree(SOURCE, copy)
    _set_points(copy, "ex3_memory", "ex3_crossover", 3)
    assert points_disagreements(copy) == []
    _set_points(copy, "ex3_memory", "ex3_crossover_visible", 1)
    assert points_disagreements(copy) == [
        "ex3_memory.ipynb cell ex3_crossover_visible is worth 1 points but the rubric has no checks for it"]


def test_resume_regrades_records_of_an_older_rubric(tmp_path, monkeypatch, capsys):
    course = make_class(tmp_path, ["correct-1", "no-scaling"])
    out = tmp_path / "out"
    grade_batch(course=course, out=out, workers=1, progress=False, outputs=False)
    item = RUBRIC["ex3_crossover"][0]                          # the instructor changes a cell's points
    monkeypatch.setitem(RUBRIC, "ex3_crossover", [Item(item.check, 3, item.category)])
    _set_points(course / "source/ch04_attention", "ex3_memory", "ex3_crossover", 3)
    assert cli.main(["grade", "--course", str(course), "--out", str(out), "--workers", "1", "--resume"]) == 0
    assert "2 records were graded by an older rubric, source notebooks or grader version; regraded" \
        in capsys.readouterr().out
    rows = read_csv(out / "grades.csv")
    assert {r["max_total"] for r in rows} == {"29"}
    assert {r["student_id"]: r["total"] for r in rows}["correct-1"] == "29"


def test_grading_stops_when_a_cell_is_worth_points_no_check_grades(tmp_path):
    course = make_class(tmp_path, ["correct-1"])
    _set_points(course / "source/ch04_attention", "ex1_attention", "ex1_softmax_visible", 4)
    with pytest.raises(ValueError, match="ex1_softmax_visible is worth 4 points but the rubric has no checks"):
        grade_batch(course=course, out=tmp_path / "out", workers=1, progress=False, outputs=False)


@pytest.mark.parametrize("damage", ["bom", "cell not an object", "no cells"])
def test_a_course_notebook_the_fingerprint_cannot_read_is_named(tmp_path, damage):
    """The fingerprint reads the course's source notebooks as intake does: a BOM is fine; anything
    unreadable stops with the file's name and what to do, not a bare parser error."""
    from autograder.grading.fingerprint import grade_cells
    from autograder.course.notebooks import CourseError
    path = tmp_path / "ex1_attention.ipynb"
    text = (ROOT / "source/ch04_attention/ex1_attention.ipynb").read_text()
    if damage == "bom":
        path.write_text("\ufeff" + text, encoding="utf-8")
        assert grade_cells(tmp_path)["ex1_attention"]
        return
    path.write_text('{"cells": ["oops", 3]}' if damage == "cell not an object" else "{}")
    if damage == "cell not an object":
        assert grade_cells(tmp_path) == {"ex1_attention": {}}
        return
    with pytest.raises(CourseError, match="ex1_attention.ipynb could not be read.*fix it before grading"):
        grade_cells(tmp_path)


def test_laid_out_json_is_the_same_value_one_key_and_one_item_per_line():
    """Records, results.json and autograded notebooks are written by json's C encoder, laid out by hand:
    the same value as ``json.dumps`` gives, readable (each top-level key, and each item of a top-level
    list, on its own line), and non-ASCII text kept where asked."""
    from autograder.records import laid_out
    value = {"cells": [{"source": "é ✓", "outputs": []}, {"id": "b"}], "metadata": {}, "nbformat": 4,
             "empty": [], "nested": {"a": [1, [2, 3]]}, "text": "line\nbreak"}
    for options in ({"ensure_ascii": False}, {"sort_keys": True}):
        text = laid_out(value, **options)
        assert json.loads(text) == value
        lines = text.splitlines()
        assert lines[0] == "{" and lines[-1] == "}"
        assert len(lines) == 2 + len(value) + len(value["cells"]) + 1      # one line per key, per cell, "]"
    assert "é ✓" in laid_out(value, ensure_ascii=False)
    assert list(json.loads(laid_out(value, sort_keys=True))) == sorted(value)
    for plain in ([], {}, 3, "x", [1, 2]):
        assert json.loads(laid_out(plain)) == plain
