"""Grader side: the client of the fork server process, which forks the sandboxed workers.

The ``ForkServer`` starts the fork server process and asks it for workers
(through ``pool.WorkerPool``, which keeps some started ahead); each worker is
driven through a ``handle.WorkerHandle``. ``autograder.run.sandboxed_student``
builds the rubric's view on top.
"""
from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from pathlib import Path

from . import cgroups
from .launch import Launch, hang_up
from .limits import Limits


class ForkServer:
    """The long-lived parent of all workers of this grader process."""

    def __init__(self, python_path: str | None = None, ready: int = 0, launch: Launch | None = None):
        """``python_path``: a folder put first on the fork server's ``sys.path`` (the tests use it to
        simulate a system-wide install of this package). ``ready``: how many workers to keep started
        ahead once workers are asked for (``pool.WorkerPool``; a batch keeps one per notebook).
        ``launch``: a fork server process started earlier (``launch.Launch``), adopted here."""
        launch = launch or Launch(python_path)
        self.root, self.proc, self.control = launch.root, launch.proc, launch.control
        self.reply_seconds = 60.0                            # every exchange with the fork server: a deadline
        self.lock = threading.Lock()                         # one spawn at a time (Dask runs threads)
        try:
            self.control.settimeout(self.reply_seconds)
            hello = json.loads(self.control.recv(65536) or b"{}")
        except (OSError, ValueError):
            hello = {}
        if not isinstance(hello, dict) or not hello.get("ready"):
            launch.abandon()
            raise RuntimeError("the sandbox fork server did not start")
        from .pool import WorkerPool  # (numpy: once a fork server runs)
        self.pool = WorkerPool(self, ready)

    def worker(self, limits: Limits):
        """A started worker for one notebook (a ready one when the pool has it)."""
        return self.pool.take(limits)

    def retire(self, handle) -> None:
        """End a worker: killed now, its clean-up finished in the background (and by ``close``)."""
        self.pool.retire(handle)

    def spawn(self, token: str, limits: Limits, output_fd: int, timings: bool = False) -> tuple[int, socket.socket]:
        """A new worker: its pid and the grader's end of its socket; its fds 1 and 2 go to ``output_fd``.
        ``timings``: the worker's status says when each of its steps was done (benchmarks/sandbox_layers.py)."""
        grader_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        deadline = time.monotonic() + self.reply_seconds
        try:
            request = json.dumps({"op": "spawn", "token": token, "limits": limits.to_dict(),
                                  **({"timings": True} if timings else {})}).encode()
            if not self.lock.acquire(timeout=self.reply_seconds):     # one deadline: the wait, the send, the reply
                raise OSError(f"another spawn held it for {self.reply_seconds:g} s")
            try:
                self.control.settimeout(max(deadline - time.monotonic(), 0.001))
                socket.send_fds(self.control, [request], [worker_end.fileno(), output_fd])
                reply = self._reply_to(token, deadline)
            finally:
                self.lock.release()
        except (OSError, ValueError) as exc:
            grader_end.close()
            raise RuntimeError(f"the sandbox fork server is not answering ({exc})") from None
        finally:
            worker_end.close()
        if "pid" not in reply:
            grader_end.close()
            raise RuntimeError(f"the fork server could not start a worker: {reply}")
        return int(reply["pid"]), grader_end

    def _reply_to(self, token: str, deadline: float) -> dict:
        """The fork server's reply for ``token``, before ``deadline``. A reply for an earlier request whose
        caller stopped waiting (a stalled fork server) is skipped and its worker ended: read as ours, it
        would give this handle another notebook's worker pid."""
        while True:
            self.control.settimeout(max(deadline - time.monotonic(), 0.001))
            reply = json.loads(self.control.recv(65536) or b"{}")
            if not isinstance(reply, dict) or not reply:
                raise OSError("the fork server hung up")
            if reply.get("token") == token:
                return reply
            _abandon(self.root, reply.get("token"))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """End the pool's workers, then hang up, so the fork server ends every other worker and removes
        their folders; kill it if it lingers."""
        self.pool.close()
        hang_up(self.control, self.proc, self.root)


def _abandon(root: Path, token) -> None:
    """End a worker nobody holds (its grader end was closed when its spawn gave up): it leaves when it
    reads the hang-up; kill what its cgroup holds and remove its folder."""
    if not isinstance(token, str) or not token.isalnum():
        return
    cgroups.kill_all(cgroups.find(token), timeout=2.0)
    shutil.rmtree(root / token, ignore_errors=True)
