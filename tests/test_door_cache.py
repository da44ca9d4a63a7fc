"""The nbgrader door's record cache (it lives as long as formgrader's server) keys on the content digest
the record carries, never on names, sizes or times: a resubmission that keeps all three is regraded."""
from __future__ import annotations

import os

import autograder.run.autograde as door
import autograder.run.grader as grader
from autograder.run.job import Graded, failed
from batch_helpers import make_class

A = "ch04_attention"


def test_a_resubmission_with_the_same_names_sizes_and_times_is_graded_again(tmp_path, monkeypatch):
    course = make_class(tmp_path, ["correct-1"])
    graded = []

    def grade(job, *args, **options):                            # what the real one returns: the digest it graded
        graded.append(job.student)
        return Graded(failed(job, "stand-in"))
    monkeypatch.setattr(grader, "grade", grade)                  # what the door's executor runs on each job
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
