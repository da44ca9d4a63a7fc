"""A Dask cluster of real processes on 127.0.0.1 for tests: a scheduler and workers, each in a session of
its own, so a test can end everything it started."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

DASK = str(Path(sys.executable).with_name("dask"))


class Cluster:
    """A scheduler and workers, each a process group of its own; ``close`` ends every one of them."""

    def __init__(self, tmp: Path, env: dict | None = None, workers: int = 2, worker=("--nthreads", "1")):
        self.file = tmp / "scheduler.json"
        self.env = {**os.environ, **(env or {})}
        self.groups, self.client, self.log = [], None, tmp / "cluster.log"      # their output, for a failure
        try:
            self._begin(workers, list(worker))
        except BaseException:
            self.close()                     # a cluster that could not start leaves no process behind
            raise

    def _begin(self, workers: int, worker: list) -> None:
        self.groups.append(self._start([DASK, "scheduler", "--host", "127.0.0.1", "--port", "0",
                                        "--no-dashboard", "--scheduler-file", str(self.file)]))
        assert wait(lambda: _scheduler_address(self.file) is not None, 60), "the scheduler never wrote its file"
        self.address = _scheduler_address(self.file)
        for _ in range(workers):
            self.groups.append(self._start([DASK, "worker", "--scheduler-file", str(self.file), *worker,
                                            "--host", "127.0.0.1", "--no-dashboard", "--nworkers", "1"]))
        from distributed import Client
        self.client = Client(self.address, timeout=30)
        self.client.wait_for_workers(workers, timeout=60)

    def _start(self, command):
        with open(self.log, "ab") as log:
            return subprocess.Popen(command, env=self.env, start_new_session=True, stdout=log, stderr=log)

    def worker_running(self, key: str) -> int | None:
        """The pid of the worker process running a task whose key starts with ``key``, if one is."""
        found = self.task_running(key)
        return found and found[1]

    def task_running(self, key: str, besides: tuple = ()) -> tuple[str, int] | None:
        """The key of a task whose key starts with ``key`` (and is none of ``besides``: an earlier try's)
        and the pid of the worker process running it, if one is."""
        for address, keys in self.client.processing().items():
            for k in map(str, keys):
                if k.startswith(key) and k not in besides:
                    # a worker just killed may still be listed: it runs nothing (its stream is closed)
                    pid = self.client.run(os.getpid, workers=[address], on_error="ignore").get(address)
                    return (k, pid) if pid else None
        return None

    def close(self):
        try:
            if self.client is not None:
                self.client.close(timeout=5)
        except Exception:  # noqa: BLE001 - the scheduler may be gone already
            pass
        for proc in self.groups:
            end_group(proc)
            proc.wait(timeout=30)


def _scheduler_address(file: Path) -> str | None:
    """The address in the scheduler's file, once it is whole (dask writes it in place: it may be empty)."""
    try:
        return json.loads(file.read_text())["address"]
    except (OSError, ValueError, KeyError):
        return None


def end_group(leader: subprocess.Popen) -> None:
    """End every process of the group ``leader`` began (its session)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(leader.pid, sig)
        except ProcessLookupError:
            return
        if wait(lambda: leader.poll() is not None and not group_alive(leader.pid), 10):
            return                # the leader reaped first: a zombie is still a member of its group


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def wait(condition, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.1)
    return False


