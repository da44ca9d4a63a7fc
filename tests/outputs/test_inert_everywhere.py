"""Student text is inert in every renderer, for every output we write (issue 35, item 8): the checks' messages
(a student's exception text) reached the autograded notebook's grade-cell outputs raw, so in formgrader and
``generate_feedback`` pages a right-to-left override made ``)1/1( ssap`` read "pass (1/1)" and an ANSI colour hid
the grader's advice. Every string of student origin now reaches a notebook through ``inert.visible``, as it
reaches our pages. Each output kind (grade's autograded notebook, the door's, our feedback pages, nbgrader's
feedback page and the report) is rendered by nbconvert's and nbgrader's own exporters, as
tests/outputs/test_inert_renderers.py does, with bidi, ANSI, HTML, markdown and MathJax payloads in every place
a student's text can stand: a check's message, a review reason, a raw, markdown and code cell of their own."""
from __future__ import annotations

import json

import nbformat
import pytest

from autograder.course.notebooks import handout
from autograder.outputs.autograded import autograded_notebook, make_inert
from autograder.outputs.feedback import feedback_html
from autograder.outputs.nbfeedback import notebook_html
from autograder.outputs.report import report_html
from autograder.records import CheckResult, Finding, Record
from autograder.run.autograde import fill_grade_cells
from conftest import ROOT
from inert_pages import PAYLOADS, assert_inert
from test_inert_renderers import A, NB, _exporters


def _record(payload: str) -> Record:
    """A record whose check message is a student's exception text, with a review reason naming their file."""
    checks = [CheckResult("ex1_softmax", "rows_sum_to_one", "correctness", 0, 1, False,
                          f"your function raised ValueError: {payload} (use the max: subtract it first)"),
              CheckResult("ex1_attention", "weights_shape", "correctness", 1, 1, True, "ok")]
    return Record("ada", tuple(checks), assignment=A, needs_review=True,
                  findings=(Finding(f"the file {payload}.ipynb could not be read"),))


def _with_student_cells(nb: dict, payload: str) -> dict:
    nb["cells"] += [{"cell_type": "raw", "id": "r", "metadata": {"format": "text/html"}, "source": payload},
                    {"cell_type": "markdown", "id": "m", "metadata": {}, "source": payload},
                    {"cell_type": "code", "id": "c", "metadata": {}, "execution_count": None, "outputs": [],
                     "source": f"x = 1  # {payload}"}]
    return nb


def _grade_notebook(tmp_path, payload: str):
    """grade's autograded notebook (``autograded_notebook``) of a submission holding the payload."""
    from autograder.course.view import read_course
    from autograder.intake import intake_submission
    from autograder.samples.synthetic import write_submission
    from conftest import RELEASE, SOURCE
    folder = write_submission(RELEASE, SOURCE, tmp_path / "submitted/ada" / A, {})
    path = folder / f"{NB}.ipynb"
    path.write_text(json.dumps(_with_student_cells(json.loads(path.read_text()), payload)))
    intake = intake_submission(folder, read_course(ROOT, A), "ada")
    written = autograded_notebook(handout(ROOT, A, NB), intake.layout[NB], _record(payload), NB)
    return nbformat.from_dict(json.loads(json.dumps(written)))


def _door_notebook(tmp_path, payload: str):
    """The door's: nbgrader's own copy of the submission, made inert and filled as ``SandboxedExecute`` does."""
    nb = nbformat.reads(json.dumps(_with_student_cells(json.loads(json.dumps(handout(ROOT, A, NB))), payload)),
                        as_version=4)                            # as nbgrader reads a submitted notebook
    make_inert(nb.cells, handout(ROOT, A, NB))
    fill_grade_cells(nb, _record(payload), NB)
    return nb


def _scored(nb):
    for cell in nb.cells:                                   # the scores nbgrader's GetGrades puts there
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.metadata.nbgrader.score = 0
    return nb


@pytest.fixture(scope="module")
def exporters():
    """The renderers, made once for the module: an exporter renders any number of notebooks (as nbconvert's
    and nbgrader's apps use one), and its first page pays for loading the templates (about 1.8 CPU-s of 4)."""
    return _exporters()


@pytest.mark.parametrize("kind", PAYLOADS)
@pytest.mark.parametrize("output", ["grade's autograded notebook", "the door's autograded notebook"])
def test_every_renderer_shows_a_student_s_text_as_text(tmp_path, exporters, kind, output):
    make = _grade_notebook if output.startswith("grade") else _door_notebook
    nb = _scored(make(tmp_path, PAYLOADS[kind]))
    for name, exporter, resources in exporters:
        page, _ = exporter.from_notebook_node(nb, resources=json.loads(json.dumps(resources)))
        assert_inert(page, kind, f"{output}, {name}")


@pytest.mark.parametrize("kind", PAYLOADS)
def test_our_own_pages_show_a_student_s_text_as_text(kind):
    record = _record(PAYLOADS[kind])
    for where, page in (("nbgrader feedback page", notebook_html(record, NB, None)),
                        ("feedback page", feedback_html(record)), ("report", report_html([record], A))):
        assert "mathjax" not in page.lower()                   # our pages typeset nothing
        assert_inert(page, kind, where, ours=frozenset({"table", "td", "strong"}), typeset=False)
