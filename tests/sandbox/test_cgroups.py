"""cgroups.py on each layout: pure v2, v2 beside v1 (``unified/``), v1 controllers, none.

The layouts are fake trees under tmp_path (ROOT is read at call time), so the v2 logic is
checked on machines that only have v1, and the other way round; one test uses the real tree."""
import os
import signal
import subprocess
import threading
import time

import pytest

from autograder.sandbox import cgroups


def _v2(base, controllers="cpu io memory pids"):
    base.mkdir(parents=True, exist_ok=True)
    (base / "cgroup.controllers").write_text(controllers + "\n")
    return base


def _v1(root):
    for ctrl in ("pids", "memory"):
        (root / ctrl).mkdir(parents=True)
        (root / ctrl / "cgroup.procs").write_text("")
    return root


@pytest.fixture
def fake_root(tmp_path, monkeypatch):
    monkeypatch.setattr(cgroups, "ROOT", tmp_path)
    monkeypatch.setattr(cgroups, "_is_root", lambda: True)
    return tmp_path


def test_pure_v2_layout(fake_root):
    _v2(fake_root)
    assert cgroups.available() == "v2"
    [d] = cgroups.create("w1", pids_max=32, memory_bytes=1 << 30)
    assert d == fake_root / "autograder" / "w1"
    assert (d / "pids.max").read_text() == "32" and (d / "memory.max").read_text() == str(1 << 30)
    assert "+pids" in (fake_root / "autograder" / "cgroup.subtree_control").read_text()
    assert cgroups.find("w1") == [d] and cgroups.worker_dirs() == [d] and cgroups.find("other") == []


def test_v2_beside_v1_is_found_under_unified(fake_root):
    _v2(fake_root / "unified")
    [d] = cgroups.create("w2", 8, 1 << 20)
    assert d == fake_root / "unified" / "autograder" / "w2" and cgroups.worker_dirs() == [d]


def test_v2_without_the_controllers_falls_back_to_v1(fake_root):
    _v2(fake_root / "unified", controllers="hugetlb")
    _v1(fake_root)
    assert cgroups.available() == "v1"
    dirs = cgroups.create("w3", 8, 1 << 20)
    assert sorted(dirs) == sorted([fake_root / "pids/autograder/w3", fake_root / "memory/autograder/w3"])
    assert (fake_root / "memory/autograder/w3/memory.limit_in_bytes").read_text() == str(1 << 20)
    assert sorted(cgroups.worker_dirs()) == sorted(dirs) == sorted(cgroups.find("w3"))


def test_no_controllers_or_not_root(fake_root, monkeypatch):
    assert cgroups.available() is None and cgroups.create("w4", 8, 1) == [] and cgroups.worker_dirs() == []
    _v2(fake_root)
    monkeypatch.setattr(cgroups, "_is_root", lambda: False)
    assert cgroups.available() is None


def test_prune_removes_only_old_empty_groups(fake_root):
    _v2(fake_root)
    old, live = fake_root / "autograder" / "old", fake_root / "autograder" / "live"
    old.mkdir(parents=True)
    live.mkdir()
    (live / "cgroup.procs").write_text("12345\n")
    os.utime(live, (0, 0))
    os.utime(old, (0, 0))
    cgroups.prune(older_than=60)
    assert not old.exists() and live.exists() and cgroups.members(live) == [12345]


def test_kill_all_ends_the_members(fake_root):
    _v2(fake_root)
    [d] = cgroups.create("w5", 8, 1 << 20)
    proc = subprocess.Popen(["sleep", "60"])
    cgroups.join([d], proc.pid)                       # a fake tree: the file just lists the pid
    assert cgroups.members(d) == [proc.pid]
    cgroups.kill_all([d], timeout=0.2)
    assert proc.wait(timeout=10) == -signal.SIGKILL


def test_a_retired_worker_s_cgroup_members_are_killed_at_once(fake_root):
    """``WorkerHandle.kill_now`` (what retiring a worker does before its clean-up is queued) kills
    every member of the worker's cgroup, not only the worker: a process that left its session and
    process group, on a machine without PID namespaces, dies then too."""
    from autograder.sandbox.handle import WorkerHandle
    _v2(fake_root)
    [d] = cgroups.create("w6", 8, 1 << 20)
    proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
    cgroups.join([d], proc.pid)
    handle = object.__new__(WorkerHandle)                 # a handle whose worker itself is already gone
    handle.token, handle.pid, handle.signalled, handle.groups = "w6", -1, True, []
    handle.lock, handle.pidfd = threading.Lock(), None
    try:
        handle.kill_now()
        assert proc.wait(timeout=10) == -signal.SIGKILL
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.skipif(not cgroups.available(), reason="needs root and writable cgroup controllers")
def test_real_tree_finds_a_worker_group():
    name = f"test-{os.getpid()}-{time.monotonic_ns()}"
    dirs = cgroups.create(name, 8, 64 << 20)
    proc = subprocess.Popen(["sleep", "60"])
    try:
        cgroups.join(dirs, proc.pid)
        assert set(dirs) <= set(cgroups.worker_dirs()) and set(cgroups.find(name)) == set(dirs)
        assert all(proc.pid in cgroups.members(d) for d in dirs)
        assert cgroups.kill_all(dirs, timeout=5)
        assert proc.wait(timeout=10) == -signal.SIGKILL and cgroups.find(name) == []
    finally:
        proc.kill()
        proc.wait()
