"""Inert by what the renderer does: no element, link or image of a student's reaches any page.

nbconvert's HTML exporters copy a raw cell's source into the page as HTML when its format is empty
or HTML (``raw_mimetypes`` defaults to the exporter's own type and ""), so a raw cell made "inert" by
removing its format was rendered, links and all, by ``nbgrader generate_feedback`` and formgrader. Each
student markdown or raw cell the handout does not hold now reaches autograded/ as a fenced text block.
The pages are rendered here by nbconvert's own exporters (lab and classic, sanitised or not) and by
nbgrader's feedback and formgrade templates, configured as generate_feedback and formgrader configure
them (``c.HTMLExporter.template_name``, ``extra_template_basedirs``).
"""
from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter
from nbgrader.server_extensions.formgrader import handlers
from traitlets.config import Config

from autograder.course.view import read_course
from autograder.intake import intake_submission
from autograder.course.notebooks import handout
from autograder.outputs.autograded import autograded_notebook, make_inert
from autograder.records import CheckResult, Record
from autograder.samples.synthetic import write_submission
from conftest import RELEASE, ROOT, SOURCE

A, NB = "ch04_attention", "ex1_attention"
EVIL = "evil.example"
HOSTILE = (f'<a href="http://{EVIL}/a">LINKMARK</a> <b>BOLDMARK</b> <img src="http://{EVIL}/i.png" alt="IMGMARK"> '
           "<table><tr><td>TABLEMARK</td></tr></table>\n\n**MDBOLD** "
           f"[MDLINK](http://{EVIL}/m) ![MDIMG](http://{EVIL}/p.png)\n\n| a | b |\n|---|---|\n| MDTABLE | c |\n")
MARKS = ("LINKMARK", "BOLDMARK", "TABLEMARK", "MDBOLD", "MDLINK", "MDTABLE")
FORMATS = ["", "text/html", "text/markdown", "text/restructuredtext", "text/latex", "TEXT/HTML"]


class _Elements(HTMLParser):
    """Every element's tag and attributes, and the tags open around each marker."""

    def __init__(self):
        super().__init__()
        self.open, self.attrs, self.around = [], [], {}

    def handle_starttag(self, tag, attrs):
        self.attrs += [v or "" for _, v in attrs]
        if tag not in ("br", "img", "meta", "link", "input", "hr"):
            self.open.append(tag)
        else:
            self.attrs.append(tag)

    def handle_endtag(self, tag):
        if tag in self.open:
            del self.open[len(self.open) - 1 - self.open[::-1].index(tag):]

    def handle_data(self, data):
        for mark in MARKS:
            if mark in data:
                self.around.setdefault(mark, []).append(tuple(self.open))


def _assert_inert(html: str, where: str) -> None:
    seen = _Elements()
    seen.feed(html)
    assert not [a for a in seen.attrs if EVIL in a], f"{where}: a student's link or image survived"
    for mark in MARKS:
        assert mark in seen.around, f"{where}: the student's text {mark} is not on the page at all"
        for tags in seen.around[mark]:
            assert tags and tags[-1] in ("code", "pre"), f"{where}: {mark} rendered inside {tags[-3:]}"
            assert not {"a", "b", "strong", "table", "td"} & set(tags), f"{where}: {mark} inside {tags}"


def _student_notebook(tmp_path) -> dict:
    folder = write_submission(RELEASE, SOURCE, tmp_path / "submitted/ada" / A, {})
    path = folder / f"{NB}.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"] += [{"cell_type": "raw", "id": f"raw{i}", "metadata": {"format": f, "raw_mimetype": f},
                     "source": HOSTILE} for i, f in enumerate(FORMATS)]
    nb["cells"] += [{"cell_type": "raw", "id": "bare", "metadata": {}, "source": HOSTILE},
                    {"cell_type": "markdown", "id": "md", "metadata": {}, "source": HOSTILE}]
    path.write_text(json.dumps(nb))
    intake = intake_submission(folder, read_course(ROOT, A), "ada")
    record = Record("ada", [CheckResult("ex1_softmax", "rows_sum_to_one", "correctness", 1, 1, True, "ok")])
    written = autograded_notebook(handout(ROOT, A, NB), intake.layout[NB], record, NB)
    return nbformat.from_dict(json.loads(json.dumps(written)))


def _exporters():
    """(name, exporter, resources): nbconvert's own, and nbgrader's as its apps configure them."""
    out = []
    for template in ("lab", "classic"):
        for sanitize in (False, True):
            out.append((f"nbconvert {template} sanitize={sanitize}",
                        HTMLExporter(template_name=template, sanitize_html=sanitize), {}))
    for template, resources in (("feedback", {"nbgrader": {"notebook": NB, "score": 1, "max_score": 28,
                                                          "late_penalty": 0}}),
                                ("formgrade", {"assignment_id": A, "notebook_id": NB, "submission_id": "x",
                                               "index": 0, "total": 1, "base_url": "", "student": "ada",
                                               "last_name": "", "first_name": "", "notebook_path": "x"})):
        for sanitize in (False, True):
            c = Config()
            c.HTMLExporter.template_name = template
            c.HTMLExporter.extra_template_basedirs = [handlers.template_path]
            c.HTMLExporter.sanitize_html = sanitize
            if template == "feedback":                          # as nbgrader's GenerateFeedback adds it
                c.HTMLExporter.extra_template_paths = [str(Path(handlers.template_path).parent / "static" /
                                                           "node_modules" / "bootstrap" / "dist" / "css")]
            out.append((f"nbgrader {template} sanitize={sanitize}", HTMLExporter(config=c), resources))
    return out


@pytest.mark.parametrize("name, exporter, resources", _exporters(), ids=lambda v: v if isinstance(v, str) else "")
def test_no_element_link_or_image_of_a_student_reaches_a_page(tmp_path, name, exporter, resources):
    nb = _student_notebook(tmp_path)
    for cell in nb.cells:                                   # the scores nbgrader's GetGrades puts there
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.metadata.nbgrader.score = 0
    html, _ = exporter.from_notebook_node(nb, resources=json.loads(json.dumps(resources)))
    _assert_inert(html, name)


def test_the_nbgrader_door_makes_the_same_cells_inert():
    """``SandboxedExecute`` runs ``make_inert`` on nbgrader's own notebook (raw cells with any format)."""
    cells = [nbformat.v4.new_raw_cell(HOSTILE, metadata={"raw_mimetype": f, "format": f}) for f in FORMATS]
    cells.append(nbformat.v4.new_markdown_cell(HOSTILE))
    nb = nbformat.v4.new_notebook(cells=cells)
    make_inert(nb.cells, handout(ROOT, A, NB))
    assert {c.cell_type for c in nb.cells} == {"markdown"}
    html, _ = HTMLExporter(template_name="classic").from_notebook_node(nb)
    _assert_inert(html, "the door's notebook")
