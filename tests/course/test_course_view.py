"""The course is read once per run (``course.view``): the batch reads its settings and notebooks once and
hands the view to every submission; a changed file is read again."""
from __future__ import annotations

import json

import pytest

from autograder.course import settings as course_settings_module
from autograder.course import view as course_view
from autograder.grading.fingerprint import fingerprint, fingerprint_of
from autograder.intake import expected
from autograder.run.batch import grade_batch
from autograder.run.hardened import grade_job
from autograder.run.job import Job
from batch_helpers import make_class, records


@pytest.fixture
def counted_reads(monkeypatch):
    """How often nbgrader_config.py and the assignment's notebooks were read, from a cold cache."""
    course_view.forget()
    expected._load.cache_clear()
    reads = {"settings": 0}
    real = course_settings_module.read_settings

    def read_settings(path):
        reads["settings"] += 1
        return real(path)
    monkeypatch.setattr(course_settings_module, "read_settings", read_settings)
    yield reads
    course_view.forget()


def test_a_batch_reads_the_course_once(tmp_path, counted_reads):
    students = ["correct-1", "no-scaling", "mask-after-softmax"]
    course = make_class(tmp_path, students)
    result = grade_batch(course=course, out=tmp_path / "out", workers=1, progress=False, outputs=False)
    assert sorted(result.graded) == sorted(students)
    assert counted_reads["settings"] == 1                   # not once more per submission
    assert course_view._view.cache_info().misses == 1       # one view, handed to every submission
    assert expected._load.cache_info().misses == 1          # the notebooks intake compares with, read once
    stamps = {r["fingerprint"] for r in records(tmp_path / "out").values()}
    assert stamps == {fingerprint(course, "ch04_attention")}


def test_a_view_is_read_again_when_a_file_changes(tmp_path, counted_reads):
    course = make_class(tmp_path, [])
    first = course_view.read_course(course, "ch04_attention")
    assert course_view.read_course(course, "ch04_attention") is first and counted_reads["settings"] == 1
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text() + "\nc.CourseDirectory.course_id = 'another-course-id'\n")
    again = course_view.read_course(course, "ch04_attention")
    assert again is not first and again.course_id == "another-course-id" and counted_reads["settings"] == 2
    before = fingerprint_of(again.grade_cells)                                 # a view's parts are read at first use
    notebook = next((course / "source/ch04_attention").glob("*.ipynb"))
    nb = json.loads(notebook.read_text())
    cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("points"))
    cell["metadata"]["nbgrader"]["points"] += 1
    notebook.write_text(json.dumps(nb))
    changed = course_view.read_course(course, "ch04_attention")
    assert fingerprint_of(changed.grade_cells) != before == fingerprint_of(again.grade_cells)
    assert fingerprint_of(changed.grade_cells) == fingerprint(course, "ch04_attention")


def test_grade_submission_uses_the_view_it_is_handed(tmp_path, counted_reads, server):
    course = make_class(tmp_path, ["correct-1"])
    view = course_view.read_course(course, "ch04_attention")
    reads = counted_reads["settings"]
    record = grade_job(Job(view, "correct-1", course / "submitted/correct-1/ch04_attention"), server)
    assert counted_reads["settings"] == reads                 # nothing of the course was read again
    assert record.fingerprint == fingerprint_of(view.grade_cells) and record.total == record.max_total


def test_the_handout_is_read_once_for_every_autograded_notebook(tmp_path, counted_reads, monkeypatch, server):
    """The autograded notebooks of every submission are laid into the release notebooks, read once per
    view (they were read again for each submission: four notebooks each)."""
    read, real = [], course_view.handout          # course.notebooks.handout: reads one notebook's file
    monkeypatch.setattr(course_view, "handout", lambda root, assignment, nb: read.append(nb) or real(root, assignment, nb))
    students = ["correct-1", "no-scaling"]
    course = make_class(tmp_path, students)
    view = course_view.read_course(course, "ch04_attention")
    for student in students:
        folder = tmp_path / "autograded" / student
        grade_job(Job(view, student, course / "submitted" / student / "ch04_attention", autograded=folder), server)
        assert len(list(folder.glob("*.ipynb"))) == 4
    assert sorted(f"{nb}.ipynb" for nb in read) == sorted(f"{nb}.ipynb" for nb in autograded_notebooks())


def autograded_notebooks():
    from autograder.assignment import NOTEBOOKS
    return list(NOTEBOOKS)
