"""The nbgrader door's record cache (it lives as long as formgrader's server) keys on the content digest
the record carries, never on names, sizes or times: a resubmission that keeps all three is regraded."""
from __future__ import annotations

import os
from dataclasses import replace

import autograder.run.autograde as door
from autograder.run.batch import current_submission, failed_record
from batch_helpers import make_class

A = "ch04_attention"


def test_a_resubmission_with_the_same_names_sizes_and_times_is_graded_again(tmp_path, monkeypatch):
    course = make_class(tmp_path, ["correct-1"])
    graded = []

    def grade_one(course_, assignment, student):                 # what the real one returns: the digest it graded
        graded.append(student)
        return replace(failed_record(student, "stand-in", course=course_, assignment=assignment),
                       submission=current_submission(course_, assignment, student))
    monkeypatch.setattr(door, "grade_one", grade_one)
    monkeypatch.setattr(door, "_GRADED", {})
    first = door.graded_submission(course, A, "correct-1")
    assert door.graded_submission(course, A, "correct-1") is first and graded == ["correct-1"]   # one per submission
    path = course / "submitted/correct-1" / A / "ex1_attention.ipynb"
    st, text = path.stat(), path.read_text()
    path.write_text(text.replace("softmax", "softmaX", 1))      # the same size and name
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))          # and time (nbgrader collect keeps mtimes)
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    second = door.graded_submission(course, A, "correct-1")
    assert graded == ["correct-1", "correct-1"] and second.submission != first.submission
