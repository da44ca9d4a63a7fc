"""Copy detection grows linearly with the class: each submission's checks are lookups in one index of
the class, read once per batch and process, never a pass over every classmate's folder per submission.

Proven by counting file-system calls, not by timing."""
import os
import shutil

import pytest

from autograder.intake import integrity
from autograder.course.view import read_course
from autograder.run.hardened import intake_submission
from autograder.samples import sample_class
from autograder.samples.synthetic import write_submission
from conftest import RELEASE, ROOT, SOURCE

HONEST = [s for s in sample_class.students() if not s.startswith(("hostile-", "damaged-"))]
FS_CALLS = ("stat", "lstat", "open", "scandir", "listdir", "read")


def _class(where, size: int):
    course = where / f"class{size}"
    course.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", course)
    variants = sample_class.students()
    for i in range(size):
        write_submission(RELEASE, SOURCE, course / "submitted" / f"s{i:03d}" / "ch04_attention",
                         variants[HONEST[i % len(HONEST)]])
    (course / "source").symlink_to(ROOT / "source")
    (course / "release").symlink_to(ROOT / "release")
    return course


def _counted(monkeypatch) -> dict:
    counts = dict.fromkeys(FS_CALLS, 0)
    for name in FS_CALLS:
        real = getattr(os, name)

        def counting(*args, _real=real, _name=name, **kwargs):
            counts[_name] += 1
            return _real(*args, **kwargs)
        monkeypatch.setattr(os, name, counting)
    return counts


def _intake_calls(course, student, snapshot, monkeypatch) -> dict:
    counts = _counted(monkeypatch)
    intake = intake_submission(course / "submitted" / student / "ch04_attention", read_course(course, "ch04_attention"),
                               student, snapshot)
    monkeypatch.undo()
    assert intake.cells and not intake.problems
    return counts


@pytest.mark.parametrize("snapshot", ["batch-1"])
def test_each_submissions_file_system_calls_do_not_grow_with_the_class(tmp_path, monkeypatch, snapshot):
    small, large = _class(tmp_path, 4), _class(tmp_path, 24)
    per_submission = {}
    for course in (small, large):
        intake_submission(course / "submitted/s000/ch04_attention", read_course(course, "ch04_attention"), "s000", snapshot)
        per_submission[course] = _intake_calls(course, "s001", snapshot, monkeypatch)   # the index is read
    assert per_submission[small] == per_submission[large]


def test_the_class_is_read_once_per_batch_then_looked_up(tmp_path, monkeypatch):
    """The first submission of a batch reads every classmate's notebooks once (a linear pass); the
    next ones read only their own files; a new batch (another token) reads the class again."""
    course = _class(tmp_path, 12)
    reads = []
    real = integrity.take                             # how a classmate's graded notebooks are read
    monkeypatch.setattr(integrity, "take", lambda *a, **k: reads.append(a[2]) or real(*a, **k))
    for i in range(12):
        intake_submission(course / "submitted" / f"s{i:03d}" / "ch04_attention", read_course(course, "ch04_attention"),
                          f"s{i:03d}", "batch-a")
    assert len(reads) == 12 * 4                       # every classmate's four notebooks, once
    intake_submission(course / "submitted/s000/ch04_attention", read_course(course, "ch04_attention"), "s000", "batch-b")
    assert len(reads) == 2 * 12 * 4


def test_copies_and_hard_links_are_still_found_through_the_index(tmp_path):
    course = _class(tmp_path, 5)
    nb = "ex2_causal_mask.ipynb"
    mine, theirs = (course / "submitted" / s / "ch04_attention" for s in ("s001", "s003"))
    shutil.copy(theirs / nb, mine / nb)
    other = course / "submitted/s004/ch04_attention" / "ex4_cross_attention.ipynb"
    (course / "submitted/s002/ch04_attention" / "ex4_cross_attention.ipynb").unlink()
    os.link(other, course / "submitted/s002/ch04_attention" / "ex4_cross_attention.ipynb")
    for student, expected in (("s001", "the same notebook as classmate(s) 's003'"),
                              ("s003", "the same notebook as classmate(s) 's001'"),
                              ("s002", "hard link with classmate 's004'"), ("s004", "hard link with classmate 's002'")):
        intake = intake_submission(course / "submitted" / student / "ch04_attention", read_course(course, "ch04_attention"),
                                   student, "batch-c")
        assert any(expected in line for line in [f.private for f in intake.findings]), (student, [f.private for f in intake.findings])
