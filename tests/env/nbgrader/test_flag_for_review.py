"""nbgrader's own autograde door flags a notebook's cells for a person, but never a cell a person scored."""
from __future__ import annotations

import nbformat
from nbgrader.api import Gradebook

from autograder.gradebook.nbgrader_api import stamp_new_sqlite
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
    FlagForReview().preprocess(nbformat.v4.new_notebook(), resources)     # nbgrader hands it the notebook


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


def test_nbgrader_autograde_again_never_reflags_what_a_person_graded(tmp_path):
    """`nbgrader autograde --force` after formgrader work: nbgrader's own SaveAutoGrades flags every cell
    with a manual score again; the door puts back the flag the person left, in a notebook that needs review
    (a cell nobody scored stays flagged) and in one that does not, and keeps the scores."""
    from autograder.__main__ import main
    from nbgrader_fast import run_nbgrader
    from batch_helpers import export_gradebook, make_class
    course = make_class(tmp_path, ["damaged-edited-tests", "correct-1"])
    assert main(["grade", "--course", str(course)]) == 0
    url = f"sqlite:///{course / 'gradebook.db'}"
    scored = {("damaged-edited-tests", "ex2_causal_mask", "ex2_causal"): 5.0,
              ("correct-1", "ex1_attention", "ex1_attention"): 4.0}
    with Gradebook(url) as gb:
        for (student, notebook, cell), score in scored.items():
            grade = gb.find_grade(cell, notebook, "ch04_attention", student)
            grade.manual_score, grade.needs_manual_grade = score, False         # as formgrader saves a score
        gb.db.commit()

    run_nbgrader(["autograde", "ch04_attention", "--force", "--log-level=ERROR"], course, "autograde")
    with Gradebook(url) as gb:
        after = {key: (gb.find_grade(key[2], key[1], "ch04_attention", key[0]).needs_manual_grade,
                       gb.find_grade(key[2], key[1], "ch04_attention", key[0]).manual_score) for key in scored}
        untouched = gb.find_grade("ex2_mask", "ex2_causal_mask", "ch04_attention", "damaged-edited-tests")
        assert untouched.manual_score is None and untouched.needs_manual_grade        # still the person's to do
    assert after == {key: (False, score) for key, score in scored.items()}
    assert export_gradebook(course) == {"damaged-edited-tests": 27.0, "correct-1": 27.0}
