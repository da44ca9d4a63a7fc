"""The nbgrader door's record cache (it lives as long as formgrader's server) keys on the content digest
the record carries, never on names, sizes or times: a resubmission that keeps all three is regraded."""
from __future__ import annotations

import os
from contextlib import nullcontext

import autograder.run.autograde as door
import autograder.run.grader as grader
from autograder.run.job import Graded, failed
from batch_helpers import make_class
from formgrader_helpers import children

FORK_SERVER = b"autograder.sandbox.forkserver"

A = "ch04_attention"


def test_a_resubmission_with_the_same_names_sizes_and_times_is_graded_again(tmp_path, monkeypatch):
    course = make_class(tmp_path, ["correct-1"])
    graded = []

    def grade(job, *args, **options):                            # what the real one returns: the digest it graded
        graded.append(job.student)
        return Graded(failed(job, "stand-in"))
    monkeypatch.setattr(grader, "grade", grade)                  # what the door's executor runs on each job
    monkeypatch.setattr(door, "_GRADED", {})
    monkeypatch.setattr(door.SERVER, "held", lambda idle: nullcontext(None))    # (no fork server: nothing runs)
    first = door.graded_submission(course, A, "correct-1")
    assert door.graded_submission(course, A, "correct-1") is first and graded == ["correct-1"]   # one per submission
    path = course / "submitted/correct-1" / A / "ex1_attention.ipynb"
    st, text = path.stat(), path.read_text()
    path.write_text(text.replace("softmax", "softmaX", 1))      # the same size and name
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))          # and time (nbgrader collect keeps mtimes)
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    second = door.graded_submission(course, A, "correct-1")
    assert graded == ["correct-1", "correct-1"] and second.submission != first.submission


def test_no_fork_server_outlives_the_autograde_in_a_long_lived_process(tmp_path, monkeypatch):
    """After formgrader's Autograde button a fork server (about 73 MB with its ready workers) stayed in the
    Jupyter server until it stopped: the door's fork server now ends once nobody has graded for a while,
    and the next student within that while is graded by the same one (nbgrader autograde of a class)."""
    import time
    from autograder.run.server import SERVER
    course = make_class(tmp_path, ["correct-1"])
    servers, before = [], set(children(os.getpid(), FORK_SERVER))     # others this test process started earlier

    def grade(job, server=None, *args, **options):              # the fork server grading uses, as the real one
        servers.append(server or SERVER.get())
        return Graded(failed(job, "stand-in"))
    monkeypatch.setattr(grader, "grade", grade)
    monkeypatch.setattr(door, "_GRADED", {})
    monkeypatch.setattr(SERVER, "kept", False)                 # (another test of this process may have used get
    monkeypatch.setattr(SERVER, "server", None)                #  and left its fork server: this test starts its own)
    monkeypatch.setattr(SERVER, "launch", None)
    door.graded_submission(course, A, "correct-1", keep_server=30)
    monkeypatch.setattr(door, "_GRADED", {})
    door.graded_submission(course, A, "correct-1", keep_server=0.2)         # the next autograde, in the while
    assert servers[0] is servers[1] and servers[0].alive()
    deadline = time.monotonic() + 15
    while servers[0].proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert servers[0].proc.poll() is not None and SERVER.server is None     # ended, with its ready workers
    assert set(children(os.getpid(), FORK_SERVER)) <= before and servers[0].proc.pid not in before

