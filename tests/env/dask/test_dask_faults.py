"""The Dask path under faults (issue 19, item 7a): a worker or the scheduler killed mid-run.

A scheduler and two workers run as their own processes on 127.0.0.1 (``dask scheduler`` /
``dask worker``, each in a session of its own so the test can end everything it started); the
grader connects with ``--scheduler``. One submission sleeps in a cell, so its task is running when
the test kills the worker that holds it (found through the scheduler) or the scheduler itself.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.run.dask import dask_key
from batch_helpers import gradebook_in, make_class, records
from dask_helpers import Cluster, end_group, group_alive, wait

pytest.importorskip("distributed")

SLOW = {"causal_mask": "import time\ntime.sleep(12)\n"
                       "def causal_mask(n):\n    return np.triu(np.full((n, n), -np.inf), 1)\n"}
STUDENTS = ["correct-1", "no-scaling", "mask-after-softmax"]


@pytest.fixture
def course(tmp_path):
    return make_class(tmp_path, STUDENTS, custom={"slow": SLOW})


def _grade(course: Path, out: Path, scheduler: str, *extra) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "autograder", "grade", "--course", str(course), "--out", str(out),
                             "--gradebook", gradebook_in(out), "--create-gradebook", "--scheduler", scheduler, *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _finish(run: subprocess.Popen, timeout: float = 240) -> tuple[int, str]:
    try:
        stdout, stderr = run.communicate(timeout=timeout)
    finally:
        end_group(run)
    assert not group_alive(run.pid), "a process of the grading run outlived it"
    return run.returncode, stdout + stderr


def _kill_the_slow_worker(cluster: Cluster, run: subprocess.Popen, killed: tuple = ()) -> str:
    """Kill the worker running a try of the slow task that is none of ``killed``; its key. A try is
    told apart by its key: the grader's retry may start before this test sees the first try gone."""
    found: list = [None]
    if not wait(lambda: found.append(cluster.task_running(dask_key("slow"), killed)) or found[-1] or run.poll()
                is not None, 120):
        raise AssertionError(f"the slow task never ran\n{_told(run, cluster)}")
    assert found[-1], f"the run ended before the slow task was killed\n{_told(run, cluster)}"
    os.kill(found[-1][1], signal.SIGKILL)
    return found[-1][0]


def _told(run: subprocess.Popen, cluster: Cluster) -> str:
    """What the run and the cluster said, for a failure's message."""
    end_group(run)
    stdout, stderr = run.communicate()
    return f"run ({run.returncode}):\n{(stdout + stderr)[-3000:]}\ncluster:\n{cluster.log.read_text(errors='replace')[-3000:]}"


@pytest.mark.parametrize("allowed_failures", ["3", "0"])
def test_a_worker_killed_mid_task_costs_no_record(course, tmp_path, allowed_failures):
    """Dask retries the task elsewhere; when it may not (allowed-failures 0), the grader retries it alone,
    and a submission whose worker dies again then is flagged; the rest of the class is graded."""
    cluster = Cluster(tmp_path, {"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": allowed_failures})
    try:
        run = _grade(course, tmp_path / "out", cluster.address)
        first = _kill_the_slow_worker(cluster, run)
        if allowed_failures == "0":
            _kill_the_slow_worker(cluster, run, (first,))   # again, when it is retried alone
        status, output = _finish(run)
    finally:
        cluster.close()
    assert "Traceback" not in output, output
    got = records(tmp_path / "out")
    assert sorted(got) == sorted([*STUDENTS, "slow"]), output
    for student in STUDENTS:
        assert got[student]["complete"] and not got[student]["needs_review"] or student != "correct-1"
    if allowed_failures == "0":
        assert got["slow"]["needs_review"] and "died" in json.dumps(got["slow"]), got["slow"]
    assert status in (0, 1), output


def test_the_scheduler_killed_mid_run_keeps_records_and_says_how_to_resume(course, tmp_path):
    cluster = Cluster(tmp_path)
    try:
        run = _grade(course, tmp_path / "out", cluster.address)
        assert wait(lambda: cluster.worker_running(dask_key("slow")) is not None, 120)
        wait(lambda: len(list((tmp_path / "out" / "records").glob("*.json"))) >= 1, 60)
        kept = {p.name: p.read_bytes() for p in (tmp_path / "out" / "records").glob("*.json")}
        end_group(cluster.groups[0])                        # the scheduler goes
        status, output = _finish(run, timeout=180)
    finally:
        cluster.close()
    assert status != 0 and "Traceback" not in output, output
    assert "--resume" in output and "scheduler" in output, output
    for name, data in kept.items():                              # what was written is kept, whole
        assert (tmp_path / "out" / "records" / name).read_bytes() == data


def test_a_folder_name_that_is_not_utf8_does_not_stop_the_dask_batch(tmp_path):
    """A student id is a folder name, any bytes: as a Dask key it could not be sent to the scheduler,
    which lost the connection, and the whole batch stopped."""
    import distributed
    from autograder.run.batch import grade_batch
    course = make_class(tmp_path, ["correct-1", "no-scaling"])
    odd = os.fsdecode(b"odd\xff")
    (course / "submitted" / "no-scaling").rename(course / "submitted" / odd)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                  host="127.0.0.1") as cluster:
        result = grade_batch(course=course, out=tmp_path / "out", scheduler=cluster.scheduler_address,
                             progress=False, gradebook_url=gradebook_in(tmp_path / "out"), create_gradebook=True)
    assert {r.student_id: r.total for r in result.records} == {"correct-1": 28, odd: 26}
