"""nbgrader's own autograde door flags a notebook's cells for a person, but never a cell a person scored."""
from __future__ import annotations

from nbgrader.api import Gradebook

from autograder.gradebook.writer import stamp_new_sqlite
from autograder.run.autograde import FlagForReview


def _gradebook(tmp_path):
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    stamp_new_sqlite(url)                                                # no `alembic heads` process
    with Gradebook(url) as gb:
        gb.add_assignment("ch04_attention")
        gb.add_notebook("ex1_attention", "ch04_attention")
        gb.add_student("ada")
        gb.add_grade_cell("ex1_softmax", "ex1_attention", "ch04_attention", max_score=3, cell_type="code")
        gb.add_grade_cell("ex1_attention", "ex1_attention", "ch04_attention", max_score=5, cell_type="code")
        submission = gb.add_submission("ch04_attention", "ada")
        for grade in (g for nb in submission.notebooks for g in nb.grades):
            grade.needs_manual_grade = False                             # as after a clean autograde
        gb.db.commit()
    return url


def _flag(url, reasons):
    resources = {"autograder_review": reasons,
                 "nbgrader": {"db_url": url, "notebook": "ex1_attention", "assignment": "ch04_attention",
                              "student": "ada"}}
    FlagForReview().preprocess(None, resources)


def _grades(url):
    with Gradebook(url) as gb:
        nb = gb.find_submission_notebook("ex1_attention", "ch04_attention", "ada")
        return {g.name: (g.needs_manual_grade, g.manual_score) for g in nb.grades}


def test_a_notebook_that_needs_a_person_has_its_cells_flagged(tmp_path):
    url = _gradebook(tmp_path)
    _flag(url, ["the notebook could not be read"])
    assert _grades(url) == {"ex1_softmax": (True, None), "ex1_attention": (True, None)}


def test_a_cell_a_person_scored_is_never_flagged_again(tmp_path):
    url = _gradebook(tmp_path)
    with Gradebook(url) as gb:
        grade = gb.find_grade("ex1_attention", "ex1_attention", "ch04_attention", "ada")
        grade.manual_score, grade.needs_manual_grade = 4.0, False
        gb.db.commit()
    _flag(url, ["the notebook could not be read"])
    assert _grades(url) == {"ex1_softmax": (True, None), "ex1_attention": (False, 4.0)}


def test_nothing_to_review_flags_nothing(tmp_path):
    url = _gradebook(tmp_path)
    _flag(url, [])
    assert {flagged for flagged, _ in _grades(url).values()} == {False}
