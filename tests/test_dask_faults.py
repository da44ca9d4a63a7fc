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
import time
from pathlib import Path

import pytest

from autograder.run.dask import dask_key
from batch_helpers import gradebook_in, make_class, records

pytest.importorskip("distributed")
pytestmark = pytest.mark.slow

DASK = str(Path(sys.executable).with_name("dask"))
SLOW = {"causal_mask": "import time\ntime.sleep(12)\n"
                       "def causal_mask(n):\n    return np.triu(np.full((n, n), -np.inf), 1)\n"}
STUDENTS = ["correct-1", "no-scaling", "mask-after-softmax"]


class Cluster:
    """A scheduler and workers, each a process group of its own; ``close`` ends every one of them."""

    def __init__(self, tmp: Path, env: dict | None = None, workers: int = 2):
        self.file = tmp / "scheduler.json"
        self.env = {**os.environ, **(env or {})}
        self.groups, self.client = [], None
        try:
            self._begin(tmp, workers)
        except BaseException:
            self.close()                     # a cluster that could not start leaves no process behind
            raise

    def _begin(self, tmp: Path, workers: int) -> None:
        self.groups.append(self._start([DASK, "scheduler", "--host", "127.0.0.1", "--port", "0",
                                        "--no-dashboard", "--scheduler-file", str(self.file)]))
        assert _wait(lambda: _scheduler_address(self.file) is not None, 60), "the scheduler never wrote its file"
        self.address = _scheduler_address(self.file)
        for _ in range(workers):
            self.groups.append(self._start([DASK, "worker", "--scheduler-file", str(self.file), "--nthreads", "1",
                                            "--host", "127.0.0.1", "--no-dashboard", "--nworkers", "1"]))
        from distributed import Client
        self.client = Client(self.address, timeout=30)
        self.client.wait_for_workers(workers, timeout=60)

    def _start(self, command):
        return subprocess.Popen(command, env=self.env, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def worker_running(self, key: str) -> int | None:
        """The pid of the worker process running a task whose key starts with ``key``, if one is."""
        for address, keys in self.client.processing().items():
            if any(str(k).startswith(key) for k in keys):
                # a worker just killed may still be listed: it runs nothing (its stream is closed)
                return self.client.run(os.getpid, workers=[address], on_error="ignore").get(address)
        return None

    def close(self):
        try:
            if self.client is not None:
                self.client.close(timeout=5)
        except Exception:  # noqa: BLE001 - the scheduler may be gone already
            pass
        for proc in self.groups:
            _end_group(proc.pid)
            proc.wait(timeout=30)


def _scheduler_address(file: Path) -> str | None:
    """The address in the scheduler's file, once it is whole (dask writes it in place: it may be empty)."""
    try:
        return json.loads(file.read_text())["address"]
    except (OSError, ValueError, KeyError):
        return None


def _end_group(pgid: int) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        if _wait(lambda: not _group_alive(pgid), 10):
            return


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _wait(condition, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.1)
    return False


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
        _end_group(run.pid)
    assert not _group_alive(run.pid), "a process of the grading run outlived it"
    return run.returncode, stdout + stderr


def _kill_the_slow_worker(cluster: Cluster) -> None:
    assert _wait(lambda: cluster.worker_running(dask_key("slow")) is not None, 120), "the slow task never ran"
    os.kill(cluster.worker_running(dask_key("slow")), signal.SIGKILL)


@pytest.mark.parametrize("allowed_failures", ["3", "0"])
def test_a_worker_killed_mid_task_costs_no_record(course, tmp_path, allowed_failures):
    """Dask retries the task elsewhere; when it may not (allowed-failures 0), the grader retries it alone,
    and a submission whose worker dies again then is flagged; the rest of the class is graded."""
    cluster = Cluster(tmp_path, {"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": allowed_failures})
    try:
        run = _grade(course, tmp_path / "out", cluster.address)
        _kill_the_slow_worker(cluster)
        if allowed_failures == "0":
            _wait(lambda: cluster.worker_running(dask_key("slow")) is None, 60)
            _kill_the_slow_worker(cluster)                  # again, when it is retried alone
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
        assert _wait(lambda: cluster.worker_running(dask_key("slow")) is not None, 120)
        _wait(lambda: len(list((tmp_path / "out" / "records").glob("*.json"))) >= 1, 60)
        kept = {p.name: p.read_bytes() for p in (tmp_path / "out" / "records").glob("*.json")}
        _end_group(cluster.groups[0].pid)                        # the scheduler goes
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
