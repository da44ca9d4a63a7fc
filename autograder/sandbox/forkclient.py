"""Grader side: the fork server process and a handle on each sandboxed worker.

A ``WorkerHandle`` asks the ``ForkServer`` for a worker and sends it requests
(run a cell, list functions, call a function, collect output) under absolute
wall-clock deadlines. Every reply is checked against its request; a worker
that dies, overruns or breaks the protocol is killed with every process it
started (cgroup, sandbox uid, process group) and the request fails with
``WorkerDied``. Its captured C-level output comes back through a file the
grader created itself and passed to the worker, never a path the worker could
swap. ``autograder.run.sandboxed_student`` builds the rubric's view on top.
"""
from __future__ import annotations

import json
import os
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from . import cgroups, layers, rpc
from .convert import decode_many, encode_calls
from .limits import Limits
from .replies import check_reply


class ForkServer:
    """The long-lived parent of all workers of this grader process."""

    def __init__(self, python_path: str | None = None, ready: int = 0):
        """``python_path``: a folder put first on the fork server's ``sys.path`` (the tests use it to
        simulate a system-wide install of this package). ``ready``: how many workers to keep started
        ahead once workers are asked for (``pool.WorkerPool``; a batch keeps one per notebook)."""
        if cgroups.available():
            cgroups.prune()
        self.root = Path(tempfile.mkdtemp(prefix="autograder-sandbox-"))
        os.chmod(self.root, 0o711)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.root), "LANG": "C.UTF-8", "MPLBACKEND": "Agg",
               "MPLCONFIGDIR": str(self.root), "IPYTHONDIR": str(self.root / ".ipython"),
               **layers.thread_env(), **({"PYTHONPATH": python_path} if python_path else {})}
        # Parent death is signalled when the starting *thread* ends: only the main thread lives as long
        # as this process (Dask starts servers from pool threads; those rely on the socket closing).
        parent = [str(os.getpid())] if threading.current_thread() is threading.main_thread() else []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "autograder.sandbox.forkserver", str(theirs.fileno()), str(self.root), *parent],
            pass_fds=[theirs.fileno()], env=env, cwd=self.root, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        theirs.close()
        self.control = ours
        self.control.settimeout(60)
        self.reply_seconds = 60.0
        self.lock = threading.Lock()                         # one spawn at a time (Dask runs threads)
        hello = json.loads(self.control.recv(65536) or b"{}")
        if not hello.get("ready"):
            raise RuntimeError("the sandbox fork server did not start")
        from .pool import WorkerPool
        self.pool = WorkerPool(self, ready)

    def worker(self, limits: Limits) -> "WorkerHandle":
        """A started worker for one notebook (a ready one when the pool has it)."""
        return self.pool.take(limits)

    def retire(self, handle: "WorkerHandle") -> None:
        """End a worker: killed now, its clean-up finished in the background (and by ``close``)."""
        self.pool.retire(handle)

    def spawn(self, token: str, limits: Limits, output_fd: int) -> tuple[int, socket.socket]:
        """A new worker: its pid and the grader's end of its socket; its fds 1 and 2 go to ``output_fd``."""
        grader_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            request = json.dumps({"op": "spawn", "token": token, "limits": limits.to_dict()}).encode()
            with self.lock:
                socket.send_fds(self.control, [request], [worker_end.fileno(), output_fd])
                reply = self._reply_to(token)
        except (OSError, ValueError) as exc:
            grader_end.close()
            raise RuntimeError(f"the sandbox fork server is not answering ({exc})") from None
        finally:
            worker_end.close()
        if "pid" not in reply:
            grader_end.close()
            raise RuntimeError(f"the fork server could not start a worker: {reply}")
        return int(reply["pid"]), grader_end

    def _reply_to(self, token: str) -> dict:
        """The fork server's reply for ``token``. A reply for an earlier request whose caller stopped
        waiting (a stalled fork server) is skipped and its worker ended: read as ours, it would give
        this handle another notebook's worker pid."""
        deadline = time.monotonic() + self.reply_seconds
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
        self.control.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.root, ignore_errors=True)


class WorkerDied(Exception):
    """The worker exited, crashed, overran a limit or broke the protocol; it has been killed."""


class WorkerHandle:
    """The grader's handle on one live sandboxed worker process."""

    def __init__(self, server: ForkServer, limits: Limits):
        self.token = secrets.token_hex(8)
        self.limits = limits
        self.signalled, self.groups = False, []
        self.workdir = server.root / self.token
        self.output_fd = _output_file()
        try:
            self.pid, self.sock = server.spawn(self.token, limits, self.output_fd)
        except BaseException:
            os.close(self.output_fd)
            raise
        self.lock, self.pidfd = threading.Lock(), _pidfd(self.pid)
        self.reader = rpc.FrameReader(self.sock.fileno())
        try:
            self.status = self.request({"op": "hello"}, 10.0)[0]["status"]
        except WorkerDied:
            self.cleanup()                            # no descriptor or folder left behind
            raise

    def request(self, header: dict, seconds: float, payload: bytes = b"") -> tuple[dict, bytes]:
        """The checked reply to ``header``; on any failure the worker is killed and WorkerDied raised."""
        rid = secrets.randbits(64)
        deadline = time.monotonic() + seconds
        try:
            rpc.send_all(self.sock.fileno(), rpc.encode_frame(rid, header, payload), deadline)
            got, reply, data = self.reader.read(deadline)
            check_reply(header, rid, got, reply)
        except rpc.Deadline:
            raise self._died(f"no answer within {seconds:g} s") from None
        except (rpc.PeerGone, OSError):
            raise self._died("the worker process ended (it exited, crashed or was killed)") from None
        except rpc.ProtocolError as exc:
            raise self._died(f"the worker broke the protocol: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - nothing a worker sends may raise into the grader
            raise self._died(f"the worker's reply could not be read ({type(exc).__name__})") from None
        return reply, data

    def run_cell(self, source: str, seconds: float, names=()) -> dict:
        """Run one cell of code. Its source travels as the frame's payload, not in the JSON header:
        a cell may be megabytes long (a notebook may be 50 MB; a header at most 1 MiB). The reply
        says which of ``names`` are callables in the notebook after the cell ran (``defined``)."""
        return self.request({"op": "run_cell", "names": list(names)}, seconds, cell_bytes(source))[0]

    def call_many(self, fn: str, calls: list[tuple[tuple, dict]], seconds: float) -> tuple[dict, list]:
        """fn(*args, **kwargs) for each call in one round trip: the reply and one outcome per call."""
        encoded, payload = encode_calls(calls)
        reply, data = self.request({"op": "call_many", "fn": fn, "calls": encoded}, seconds, payload)
        if not reply["ok"]:
            return reply, []
        try:
            return reply, decode_many(reply["many"], data, len(calls))
        except Exception as exc:  # noqa: BLE001 - ProtocolError, or anything else a forged value causes
            raise self._died(f"the worker sent results the grader cannot read: {str(exc)[:200]}") from None

    def _died(self, why: str) -> WorkerDied:
        self.kill()
        return WorkerDied(why)

    def fd_output(self, cap: int) -> str:
        """What the worker's processes wrote to fds 1 and 2: at most ``cap`` bytes, read from our own file."""
        try:
            return os.pread(self.output_fd, cap, 0).decode("utf-8", "replace")
        except OSError:
            return ""

    def cgroups(self) -> list:
        """The worker's cgroup folders, looked up once they exist (the worker creates them as it starts)."""
        if not self.groups:
            self.groups = cgroups.find(self.token)
        return self.groups

    def kill_now(self) -> None:
        """SIGKILL the worker, its process group and every process in its cgroup at once, without
        waiting (``kill`` waits and makes sure); safe from any thread, any number of times. As the
        init of its PID namespace, the worker takes every process it started with it. Its pid is
        signalled once, through a pidfd, and only while the worker lives: the fork server reaps it, so
        afterwards that pid may be another process's (another student's worker, even)."""
        for group in self.cgroups():
            cgroups.signal_members(group)
        with self.lock:
            if self.signalled:
                return
            self.signalled = True
            if self.pidfd is not None and _exited(self.pidfd):
                return
            for kill in (os.killpg, self._kill_pid):
                try:
                    kill(self.pid, signal.SIGKILL)
                except OSError:
                    pass

    def _kill_pid(self, pid: int, sig: int) -> None:
        if self.pidfd is not None:
            signal.pidfd_send_signal(self.pidfd, sig)
        else:
            os.kill(pid, sig)

    def kill(self) -> None:
        """SIGKILL the worker and everything it started; no process survives."""
        groups = self.cgroups()
        emptied = cgroups.kill_all(groups) if groups else False
        if os.geteuid() == 0 and not emptied:
            _kill_uid(layers.sandbox_uid(self.pid))
        self.kill_now()
        try:
            self.sock.close()
        except OSError:
            pass

    def cleanup(self) -> None:
        self.kill()
        with self.lock:
            if self.pidfd is not None:
                os.close(self.pidfd)
                self.pidfd = None
        if self.output_fd >= 0:
            os.close(self.output_fd)
            self.output_fd = -1
        shutil.rmtree(self.workdir, ignore_errors=True)


def _abandon(root: Path, token) -> None:
    """End a worker nobody holds (its grader end was closed when its spawn gave up): it leaves when it
    reads the hang-up; kill what its cgroup holds and remove its folder."""
    if not isinstance(token, str) or not token.isalnum():
        return
    cgroups.kill_all(cgroups.find(token), timeout=2.0)
    shutil.rmtree(root / token, ignore_errors=True)


def _pidfd(pid: int) -> int | None:
    """A descriptor that names this process for good (None where pidfds are missing). The worker was
    just started and has not answered yet, so the pid is still its own."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _exited(pidfd: int) -> bool:
    """A pidfd becomes readable when its process has ended."""
    return bool(select.select([pidfd], [], [], 0)[0])


def _output_file() -> int:
    """An anonymous file for the worker's fds 1 and 2, created here and never looked up by name."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("autograder-worker-output", os.MFD_CLOEXEC)
    with tempfile.TemporaryFile() as f:
        return os.dup(f.fileno())


def _kill_uid(uid: int) -> None:
    """kill(-1, SIGKILL) as the sandbox uid: ends every process of that uid, even setsid daemons."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgid(uid)
            os.setuid(uid)
            for _ in range(3):
                try:
                    os.kill(-1, signal.SIGKILL)
                except OSError:
                    break
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def cell_bytes(source: str) -> bytes:
    """A cell's source as sent to the worker (lone surrogates kept, as the notebook held them)."""
    return source.encode("utf-8", "surrogatepass")
