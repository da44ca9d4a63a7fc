"""nbgrader's autograded notebooks as `grade` writes them, and the per-notebook review flags they carry
(the whole path through formgrader and nbgrader: test_nbgrader_doors.py)."""
import nbformat
import pytest
from nbconvert.filters import markdown2html
from nbgrader.utils import determine_grade

from autograder.course.view import read_course
from autograder.intake import intake_submission
from autograder.course.notebooks import handout
from autograder.outputs.autograded import as_list, as_text, autograded_notebook
from autograder.records import INTERNAL, CheckResult, Finding, Record
from autograder.samples.synthetic import write_submission
from batch_helpers import make_class
from conftest import RELEASE, ROOT, SOURCE

A = "ch04_attention"


def _record(flags=None, needs_review=False, internal=False) -> Record:
    details = {"internal_error": "Traceback"} if internal else {}
    checks = [CheckResult("ex1_softmax", "rows_sum_to_one", "correctness", 1, 1, True, "ok"),
              CheckResult("ex1_softmax", "any_axis", "correctness", 0, 1, False, "use axis", details=details),
              CheckResult("ex1_attention", "shapes", "correctness", 1, 1, True, "ok"),
              CheckResult("ex2_mask", "values", "masking", 0, 2, False, "mask the future")]
    findings = [Finding(why, nb) for nb, reasons in (flags or {}).items() for why in reasons]
    return Record("ada", checks, needs_review=needs_review, findings=findings)


@pytest.mark.parametrize("text", ["<script>alert(1)</script>", "``` <img src=x onerror=alert(1)>\n```",
                                  "[a](javascript:alert(1)) ````` `"])
def test_student_text_renders_as_text(text):
    for markdown in (as_text(text), as_list([text, "1. $x$ *y* http://e.com"])):   # a cell's text, a review note
        html = markdown2html(markdown)
        assert "<script" not in html and "<img" not in html and "href=" not in html and "<em>" not in html
        assert "alert(1)" in html and "<ol" not in html
    assert "<code>$</code>x<code>$</code>" in markdown2html(as_list(["$x$"]))    # MathJax never reads code


def test_review_reasons_belong_to_their_notebook():
    record = _record({"": [], "ex2_causal_mask": ["ex2_causal_mask.ipynb could not be read"]}, needs_review=True)
    assert record.review_reasons("ex2_causal_mask") == ["ex2_causal_mask.ipynb could not be read"]
    assert record.review_reasons("ex1_attention") == []
    whole = _record({"": ["the folder is a link"], "ex2_causal_mask": ["x"]}, needs_review=True)
    assert whole.review_reasons("ex1_attention") == ["the folder is a link"]
    internal = _record({"": []}, internal=True)
    assert internal.needs_review and internal.review_reasons("ex1_attention") == [INTERNAL]
    assert internal.review_reasons("ex2_causal_mask") == []
    assert _record({"": ["x"]}).review_reasons("ex1_attention") == []          # not flagged: nothing to say
    written = {k: v for k, v in _record().to_dict().items() if k not in ("findings", "integrity")}
    legacy = Record.from_dict({**written, "needs_review": True, "integrity": ["old"]})
    assert legacy.review_reasons("ex1_attention") == ["old"]                    # written before flags were kept


def test_grade_cells_carry_the_points_as_nbgrader_reads_them(tmp_path):
    folder = write_submission(RELEASE, SOURCE, tmp_path / "submitted/ada" / A, {})
    intake = intake_submission(folder, read_course(ROOT, A), "ada")
    record = _record({"": [], "ex1_attention": ["a reason <b>"]}, needs_review=True)
    nb = nbformat.from_dict(autograded_notebook(handout(ROOT, A, "ex1_attention"), intake.layout["ex1_attention"],
                                                record, "ex1_attention"))
    nbformat.validate(nb)
    scored = {c.metadata.nbgrader.grade_id: determine_grade(c)[0] for c in nb.cells
              if c.metadata.get("nbgrader", {}).get("grade") and c.metadata.nbgrader.get("points")}
    assert scored == {"ex1_softmax": 1.0, "ex1_attention": 1.0}
    assert "<p>a reason &lt;b&gt;</p>" not in markdown2html(nb.cells[0].source)     # a list item, no fence:
    assert "<li>a reason &lt;b&gt;</li>" in markdown2html(nb.cells[0].source)       # it wraps in formgrader
    visible = [c.metadata.nbgrader for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").endswith("_visible")]
    assert len(visible) == 2 and not any(m.grade or "points" in m for m in visible)   # no score asked beside them
    text = nbformat.writes(nb)
    assert "grade_cell(" not in text and "HIDDEN" not in text
    assert len(nb.cells) == len(nbformat.read(RELEASE / "ex1_attention.ipynb", as_version=4).cells) + 1


def test_an_unreadable_notebook_is_the_release_with_the_note():
    record = _record({"": [], "ex2_causal_mask": ["ex2_causal_mask.ipynb is damaged"]}, needs_review=True)
    nb = autograded_notebook(handout(ROOT, A, "ex2_causal_mask"), None, record, "ex2_causal_mask")
    released = nbformat.read(RELEASE / "ex2_causal_mask.ipynb", as_version=4)
    assert [c["source"] for c in nb["cells"][1:]] == [c.source for c in released.cells]
    assert "ex2_causal_mask.ipynb is damaged" in markdown2html(nb["cells"][0]["source"])


def test_autograded_notebooks_that_cannot_be_written_cost_only_those_files(tmp_path):
    from autograder.course.view import read_course
    from autograder.run.batch import _finish, student_job
    from autograder.run.grader import grade
    from autograder.run.progress import Progress
    course = make_class(tmp_path, ["correct-1"])
    (course / "autograded" / "correct-1").mkdir(parents=True)
    (course / "autograded" / "correct-1" / A).write_text("in the way")          # a file where the folder goes
    record = grade(student_job(read_course(course, A), "correct-1", autograded=True)).record
    assert record.total == 28 and not record.needs_review
    assert len(record.unwritten) == 1 and "autograded notebooks of 'correct-1'" in record.unwritten[0]
    errors = []
    _finish(tmp_path / "out", record, bar=Progress(1, enabled=False), errors=errors)
    assert errors == list(record.unwritten)                   # the run reports it; the record is written
    assert (tmp_path / "out" / "records" / "correct-1.json").exists()


def test_a_lone_surrogate_a_student_wrote_reaches_nbgrader_as_visible_text(tmp_path):
    """A notebook's JSON may hold a lone surrogate ("\\ud800" is valid JSON); left in an autograded notebook,
    nbgrader's generate_feedback failed for that student (nbconvert writes each page as strict UTF-8). It is
    written as the text \\ud800 (an undecodable byte's \\udcff as \\xff, as ``inert.visible_bytes`` shows it)."""
    import json
    from nbconvert import HTMLExporter
    from autograder.outputs.autograded import write_autograded
    folder = write_submission(RELEASE, SOURCE, tmp_path / "submitted/ada" / A, {})
    path = folder / "ex1_attention.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"] += [{"cell_type": "code", "execution_count": None, "id": "odd", "metadata": {}, "outputs": [],
                     "source": "# odd \ud800 and \udcff \\ud800\n"},
                    {"cell_type": "markdown", "id": "note", "metadata": {}, "source": "note \udfff"}]
    path.write_text(json.dumps(nb))                       # ensure_ascii: the surrogates travel as JSON escapes
    intake = intake_submission(folder, read_course(ROOT, A), "ada")
    written = autograded_notebook(handout(ROOT, A, "ex1_attention"), intake.layout["ex1_attention"], _record(),
                                  "ex1_attention")
    write_autograded(tmp_path / "autograded", {"ex1_attention": written})
    text = (tmp_path / "autograded" / "ex1_attention.ipynb").read_bytes().decode("utf-8")
    read = nbformat.reads(text, as_version=4)
    nbformat.validate(read)
    sources = [c.source for c in read.cells]
    assert "# odd \\ud800 and \\xff \\ud800\n" in sources
    assert any("note \\udfff" in s for s in sources)
    HTMLExporter().from_notebook_node(read)[0].encode("utf-8")      # strict, as nbconvert writes the page
