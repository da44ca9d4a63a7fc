"""A submission entry that is not a folder (FIFO, plain file, socket, dangling link) is listed and
flagged for review with a message, never silently left out and never opened."""
from __future__ import annotations

import os
import stat

import pytest

from autograder.course.submissions import discover
from autograder.course.view import read_course
from autograder.run.batch import grade_batch, student_job
from autograder.run.grader import grade
from batch_helpers import gradebook_in, make_class, read_csv

ASSIGNMENT = "ch04_attention"
ODD = {"k-fifo": "a FIFO", "k-file": "a plain file", "k-socket": "a socket",
       "k-dangling": "a link that points nowhere"}


def lay_out_odd(course):
    for student in ODD:
        (course / "submitted" / student).mkdir(parents=True)
    entry = {s: course / "submitted" / s / ASSIGNMENT for s in ODD}
    os.mkfifo(entry["k-fifo"])                        # opening it would block: a hang, if anything opened it
    entry["k-file"].write_bytes(b"an upload gone wrong")
    os.mknod(entry["k-socket"], stat.S_IFSOCK | 0o600)
    entry["k-dangling"].symlink_to(course / "nowhere")


@pytest.fixture
def odd_class(tmp_path):
    course = make_class(tmp_path, students=["correct-1"])
    lay_out_odd(course)
    return course


def test_discover_lists_entries_that_are_not_folders(odd_class):
    assert discover(odd_class, ASSIGNMENT) == sorted(["correct-1", *ODD])


@pytest.mark.parametrize("student", sorted(ODD))
def test_an_entry_that_is_not_a_folder_is_a_record_for_review(odd_class, student):
    record = grade(student_job(read_course(odd_class, ASSIGNMENT), student)).record
    assert record.needs_review and record.total == 0
    assert (f"submitted/{student}/{ASSIGNMENT} is {ODD[student]}, not a folder: nothing could be graded; "
            "ask the student to resubmit") in record.integrity[0]


def test_batch_rows_for_entries_that_are_not_folders(tmp_path):
    course = make_class(tmp_path, students=[])
    lay_out_odd(course)
    os.mkfifo(course / "submitted" / "stray-fifo")            # a whole student folder that is a FIFO
    out = tmp_path / "out"
    result = grade_batch(course=course, out=out, workers=1, progress=False, gradebook_url=gradebook_in(out),
                         create_gradebook=True)
    rows = {r["student_id"]: r for r in read_csv(out / "grades.csv")}
    assert sorted(rows) == sorted(ODD) and sorted(result.graded) == sorted(ODD)
    assert all(r["needs_review"] in ("True", "true", "1", "yes") for r in rows.values()), rows
    assert "is a FIFO, not a folder" in (out / "report.html").read_text()
    assert result.notes == ["submitted/stray-fifo is a FIFO, not a student folder; it was not graded"]
