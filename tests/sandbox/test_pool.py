"""The pool of ready workers: handed out only when fresh, alive and alike; ended when idle or closed;
ended workers killed at once and cleaned up behind (autograder.sandbox.pool)."""
from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from autograder.sandbox.limits import Limits
from autograder.sandbox.forkclient import ForkServer


def wait_until(condition, seconds: float = 20.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def running(pid: int) -> bool:
    """The process exists and is not a zombie (the fork server reaps its workers at once)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def pooled():
    server = ForkServer(ready=2)
    server.pool.idle_seconds = 120.0                      # a loaded machine never lets it go idle mid-test
    yield server
    server.close()


def test_a_ready_worker_is_handed_out_and_the_pool_refilled(pooled):
    first = pooled.worker(Limits())                       # none ready yet: started for this call
    assert wait_until(lambda: len(pooled.pool.ready) == 2)
    ready = list(pooled.pool.ready)
    assert first not in ready
    second = pooled.worker(Limits())
    assert second in ready and second not in pooled.pool.ready
    assert second.run_cell("x = 41 + 1\nprint(x)", 10)["ok"]
    assert second.request({"op": "output"}, 5)[0]["stdout"] == "42\n"
    assert wait_until(lambda: len(pooled.pool.ready) == 2), "the keeper started the next one"
    for handle in (first, second):
        pooled.retire(handle)


def test_a_ready_worker_with_other_limits_is_never_handed_out(pooled):
    pooled.retire(pooled.worker(Limits()))
    assert wait_until(lambda: len(pooled.pool.ready) == 2)
    old = list(pooled.pool.ready)
    other = Limits(cell_seconds=3.0)
    handle = pooled.worker(other)
    assert handle not in old and handle.limits == other
    assert wait_until(lambda: not any(running(h.pid) for h in old)), "the unfit ready workers were ended"
    assert wait_until(lambda: len(pooled.pool.ready) == 2 and all(h.limits == other for h in pooled.pool.ready))
    pooled.retire(handle)


def test_a_ready_worker_that_died_is_never_handed_out(pooled):
    pooled.retire(pooled.worker(Limits()))
    assert wait_until(lambda: len(pooled.pool.ready) == 2)
    dead = list(pooled.pool.ready)
    for handle in dead:
        os.kill(handle.pid, signal.SIGKILL)
    assert wait_until(lambda: not any(running(h.pid) for h in dead))
    handle = pooled.worker(Limits())
    assert handle not in dead
    assert handle.run_cell("y = 1", 10)["ok"], "a live worker, not one that fails the student's first cell"
    pooled.retire(handle)


def test_ready_workers_nobody_takes_are_ended():
    server = ForkServer(ready=2)
    try:
        server.pool.idle_seconds = 0.5
        server.retire(server.worker(Limits()))
        assert wait_until(lambda: len(server.pool.ready) >= 1, 10)
        started = list(server.pool.ready)
        assert wait_until(lambda: not server.pool.ready and not any(running(h.pid) or h.workdir.exists()
                                                                    for h in started), 10)
    finally:
        server.close()


def test_retire_kills_at_once_and_cleans_up_behind(pooled, monkeypatch):
    handle = pooled.worker(Limits())
    assert handle.run_cell("import time", 10)["ok"]
    release, cleaned = threading.Event(), threading.Event()
    real = type(handle).cleanup

    def slow_cleanup(self):
        release.wait(10)
        real(self)
        cleaned.set()
    monkeypatch.setattr(type(handle), "cleanup", slow_cleanup)
    pooled.retire(handle)
    assert wait_until(lambda: not running(handle.pid), 5), "killed before its clean-up ran"
    assert not cleaned.is_set()
    release.set()
    assert cleaned.wait(10) and not handle.workdir.exists()


def test_close_ends_every_ready_worker_and_finishes_every_clean_up():
    server = ForkServer(ready=3)
    server.pool.idle_seconds = 120.0
    retired = server.worker(Limits())
    assert retired.run_cell("z = 2", 10)["ok"]
    assert wait_until(lambda: len(server.pool.ready) == 3)
    ready = list(server.pool.ready)
    server.retire(retired)
    server.pool.close()                                   # the pool's part of server.close()
    try:
        assert not any(running(h.pid) or h.workdir.exists() for h in [*ready, retired])
    finally:
        server.close()
    assert not server.root.exists()
    assert server.pool.thread is None or not server.pool.thread.is_alive()
    with pytest.raises(RuntimeError, match="closed"):
        server.worker(Limits())


def test_a_server_without_a_pool_starts_workers_on_demand_only(server):
    handle = server.worker(Limits())
    time.sleep(0.3)
    assert not server.pool.ready
    server.retire(handle)
    assert wait_until(lambda: not handle.workdir.exists())


def test_a_batch_s_server_grades_with_ready_workers_exactly_as_without(server, tmp_path):
    """``grading_server`` (what ``grade`` uses) keeps one worker ready per notebook; the records it
    gives are those of workers started on demand, check for check (a wrong mask, so that failed
    checks and their diagnoses are compared too)."""
    from autograder.run.hardened import grade_submission, grading_server
    from autograder.assignment import NOTEBOOKS
    from conftest import ROOT
    from sandbox_helpers import WRONG_MASK, ex2_notebook
    folder = ex2_notebook(tmp_path, "pooled", WRONG_MASK).parent
    ahead = grading_server()
    ahead.pool.idle_seconds = 120.0
    try:
        first = grade_submission(folder, course=ROOT, student_id="pooled", server=ahead)
        assert wait_until(lambda: len(ahead.pool.ready) == ahead.pool.size == len(NOTEBOOKS))
        ready = {h.pid for h in ahead.pool.ready}
        second = grade_submission(folder, course=ROOT, student_id="pooled", server=ahead)
        assert ready - {h.pid for h in ahead.pool.ready}, "the second submission took ready workers"
    finally:
        ahead.close()
    own = grade_submission(folder, course=ROOT, student_id="pooled", server=server)

    def shown(record):
        return [(c.grade_id, c.check, c.points, c.passed, c.message, c.diagnosis) for c in record.checks]
    assert shown(first) == shown(second) == shown(own)
    assert own.total < own.max_total


def test_a_reply_the_grader_gave_up_on_is_never_taken_for_the_next_worker():
    """A stalled fork server answers a spawn after the grader stopped waiting; the next spawn must not
    read that reply as its own (its handle would carry another notebook's worker pid, and retiring it
    would kill that worker). The late reply's worker is ended and its folder removed."""
    server = ForkServer()
    own = set(os.listdir(server.root))                    # the fork server's own files (matplotlib, IPython)
    try:
        server.reply_seconds = 0.5
        os.kill(server.proc.pid, signal.SIGSTOP)
        threading.Timer(1.5, os.kill, (server.proc.pid, signal.SIGCONT)).start()
        with pytest.raises(RuntimeError, match="not answering"):
            server.worker(Limits())
        time.sleep(2.5)                                   # the late reply waits on the control socket now
        server.reply_seconds = 60.0
        first, second = server.worker(Limits()), server.worker(Limits())
        for handle in (first, second):
            assert handle.run_cell("import os\nprint(os.readlink('/proc/self/ns/net'))", 10)["ok"]
            shown = handle.request({"op": "output"}, 5)[0]["stdout"].split()      # its own /proc hides its host pid
            assert shown[-1] == os.readlink(f"/proc/{handle.pid}/ns/net"), "the handle names its own worker"
        server.retire(second)
        assert first.run_cell("y = 2", 10)["ok"], "ending one worker left the other alone"
        server.retire(first)
        assert wait_until(lambda: set(os.listdir(server.root)) <= own), "no worker folder left, nor the late one's"
    finally:
        server.close()


def test_a_worker_that_ended_is_never_signalled_by_its_old_pid():
    """Once the worker has ended, its pid may name another process (the fork server reaps it at once;
    a student's fork loop can cycle the pids): killing it again (an abort after a notebook finished,
    a clean-up behind) must not signal that pid or process group. Here a live process stands where
    the ended worker's pid would be."""
    import subprocess
    from autograder.sandbox.handle import WorkerHandle
    ended = subprocess.Popen(["true"])
    pidfd = os.pidfd_open(ended.pid)
    ended.wait()
    bystander = subprocess.Popen(["sleep", "60"], start_new_session=True)
    handle = object.__new__(WorkerHandle)
    handle.token, handle.pid, handle.signalled, handle.groups = "0" * 16, bystander.pid, False, []
    handle.lock, handle.pidfd = threading.Lock(), pidfd
    try:
        handle.kill_now()
        time.sleep(0.3)
        assert bystander.poll() is None, "the process that now has the old pid was left alone"
    finally:
        os.close(pidfd)
        bystander.kill()
        bystander.wait()


def test_ready_workers_are_started_side_by_side_and_greeted_when_taken(pooled):
    """The keeper only asks for a worker and sends it its first request: it does not wait for each to put
    its layers on before starting the next, so the ready ones have not been greeted; the one taken has
    (its first reply, the layers it is under, read then)."""
    pooled.retire(pooled.worker(Limits()))
    assert wait_until(lambda: len(pooled.pool.ready) == 2)
    assert all(h.status is None for h in pooled.pool.ready)
    handle = pooled.worker(Limits())
    assert handle.status and handle.status.get("session")
    assert handle.run_cell("w = 3", 10)["ok"]
    pooled.retire(handle)


def test_the_pool_starts_no_worker_nobody_will_take(pooled):
    """A batch says how many workers it will still take: the pool keeps no more than that ready, and
    ends the ready ones at once when the batch is done (``expect(0)``), not after ``idle_seconds``."""
    pooled.pool.expect(1)
    pooled.retire(pooled.worker(Limits()))                # the one expected: none left to start ahead
    time.sleep(0.5)
    assert not pooled.pool.ready
    pooled.pool.expect(None)
    pooled.retire(pooled.worker(Limits()))
    assert wait_until(lambda: len(pooled.pool.ready) == 2)
    ready = list(pooled.pool.ready)
    pooled.pool.expect(0)
    assert wait_until(lambda: not pooled.pool.ready and not any(running(h.pid) or h.workdir.exists()
                                                                for h in ready), 10)


def test_ready_workers_that_never_come_up_stop_the_pool_and_a_take_ends(pooled, monkeypatch):
    """A ready worker is greeted only when taken: one that never gives its first reply (here every
    worker is stopped as soon as it is spawned) fails its greeting, and the pool then stops starting
    workers, as when the fork server cannot start one. The take ends with the notebook's own start
    and its reason; it used to greet, fail and take the next ready one, which the keeper had just
    started, for ever."""
    from autograder.sandbox.handle import WorkerDied, WorkerHandle
    real_spawn = type(pooled).spawn
    spawned = []

    def stopped_spawn(self, *args, **kwargs):
        pid, sock = real_spawn(self, *args, **kwargs)
        os.kill(pid, signal.SIGSTOP)
        spawned.append(pid)
        return pid, sock
    monkeypatch.setattr(type(pooled), "spawn", stopped_spawn)
    monkeypatch.setattr(WorkerHandle.greet, "__defaults__", (0.5,))
    with pytest.raises(WorkerDied):
        pooled.worker(Limits())                           # none ready: its own start, which never answers
    assert wait_until(lambda: len(pooled.pool.ready) == 2)
    outcome = []

    def take():
        try:
            outcome.append(pooled.worker(Limits()))
        except WorkerDied as exc:
            outcome.append(exc)
    taker = threading.Thread(target=take, daemon=True)
    taker.start()
    taker.join(20)
    assert not taker.is_alive(), "take() kept greeting freshly started workers that never answer"
    assert len(outcome) == 1 and isinstance(outcome[0], WorkerDied)
    assert pooled.pool.size == 0
    assert wait_until(lambda: not pooled.pool.ready and not any(running(pid) for pid in spawned), 10)


def test_a_worker_ended_before_it_came_up_leaves_no_cgroup_or_folder():
    """The pool ends ready workers that may not be up yet (they are greeted only when taken): ``close``,
    ``expect(0)``, other limits. One ended just after its start could make its cgroups (and folder) after
    the clean-up had looked for them, and they stayed behind (about half of them, ended at once)."""
    from autograder.sandbox import cgroups
    from autograder.sandbox.handle import WorkerHandle
    server = ForkServer()
    try:
        tokens = []
        for i in range(16):
            handle = WorkerHandle(server, Limits(), greet=False)
            tokens.append(handle.token)
            time.sleep(0.001 * (i % 4))
            handle.cleanup()
        assert not [t for t in tokens if cgroups.find(t)], "cgroups left behind"
        assert not [t for t in tokens if (server.root / t).exists()], "worker folders left behind"
    finally:
        server.close()
