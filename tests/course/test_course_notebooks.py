"""autograder.course.notebooks: the one reader of the course's own notebooks (a byte-order mark is
fine), and a course whose source notebooks start with one graded end to end, into the gradebook."""
import codecs

import pytest

from autograder.course.notebooks import CourseError, nbgrader_meta, read_notebook, source_cells
from autograder.run.batch import grade_batch
from batch_helpers import export_gradebook, make_class, read_csv
from conftest import SOURCE


def test_a_byte_order_mark_is_read_past(tmp_path):
    path = tmp_path / "ex1_attention.ipynb"
    path.write_bytes(codecs.BOM_UTF8 + (SOURCE / "ex1_attention.ipynb").read_bytes())
    assert read_notebook(path) == read_notebook(SOURCE / "ex1_attention.ipynb")


@pytest.mark.parametrize("text, says", [("{", "could not be read"), ("[1, 2]", "is not a notebook")])
def test_an_unreadable_course_notebook_is_named_with_what_to_do(tmp_path, text, says):
    path = tmp_path / "ex1_attention.ipynb"
    path.write_text(text)
    with pytest.raises(CourseError, match=f"ex1_attention.ipynb {says}.*fix it before grading"):
        read_notebook(path)


@pytest.mark.parametrize("cell", [None, 3, {}, {"metadata": []}, {"metadata": {"nbgrader": "x"}}])
def test_nbgrader_metadata_that_is_not_an_object_reads_as_none(cell):
    assert nbgrader_meta(cell) == {}


def test_source_cells_are_every_nbgrader_cell_in_order():
    cells = source_cells(SOURCE)
    assert sorted(cells) == ["ex1_attention", "ex2_causal_mask", "ex3_memory", "ex4_cross_attention"]
    ids = [nbgrader_meta(c)["grade_id"] for c in cells["ex2_causal_mask"]]
    assert "ex2_mask" in ids and "ex2_causal" in ids and ids.index("ex2_mask") < ids.index("ex2_causal")


def test_a_course_whose_source_notebooks_start_with_a_bom_is_graded_into_its_gradebook(tmp_path):
    """Intake, the fingerprint and the gradebook writer all read the BOM source notebooks: the
    gradebook writer read them with a plain json.loads and failed after the whole class was graded."""
    course = make_class(tmp_path, ["correct-1", "no-scaling"])
    for path in sorted((course / "source/ch04_attention").glob("*.ipynb")):
        path.write_bytes(codecs.BOM_UTF8 + path.read_bytes())
    result = grade_batch(course=course, out=tmp_path / "out", workers=1, progress=False)
    assert result.errors == []
    totals = {r["student_id"]: float(r["total"]) for r in read_csv(tmp_path / "out" / "grades.csv")}
    assert totals["correct-1"] == 28 and totals["no-scaling"] < 28
    assert export_gradebook(course) == totals
