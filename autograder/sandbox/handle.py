"""Grader side: the handle on one sandboxed worker, which a ``ForkServer`` started.

A ``WorkerHandle`` sends its worker requests (run a cell, list functions, call
a function, collect output) under absolute wall-clock deadlines. Every reply is
checked against its request; a worker that dies, overruns or breaks the
protocol is killed with every process it started (cgroup, sandbox uid, process
group) and the request fails with ``WorkerDied``. Its captured C-level output
comes back through a file the grader created itself and passed to the worker,
never a path the worker could swap.
"""
from __future__ import annotations

import os
import secrets
import shutil
import signal
import tempfile
import threading
import time

from . import cgroups, layers, rpc
from .convert import decode_many, encode_calls
from .limits import Limits, Received
from .replies import check_reply


class WorkerDied(Exception):
    """The worker exited, crashed, overran a limit or broke the protocol; it has been killed. ``late``: it did
    not answer within the seconds it was given (its message says how many, in whole seconds)."""

    def __init__(self, why: str, late: bool = False):
        super().__init__(why)
        self.late = late


def whole_seconds(seconds: float) -> str:
    """A time limit as a person reads it: whole seconds, at least 1 ("32 s", not "31.75 s")."""
    return f"{max(round(seconds), 1)} s"


class WorkerHandle:
    """The grader's handle on one live sandboxed worker process."""

    def __init__(self, server, limits: Limits, timings: bool = False, greet: bool = True):
        """A new worker from ``server`` (a ``forkclient.ForkServer``), started under ``limits``. With
        ``greet=False`` it is only asked for its first reply, which ``greet`` reads later: the worker
        puts its layers on meanwhile, side by side with the others being started (``pool.WorkerPool``)."""
        self.token = secrets.token_hex(8)
        self.limits = limits
        self.signalled, self.groups = False, []
        self.workdir = server.root / self.token
        self.output_fd = _output_file()
        try:
            self.pid, self.sock = server.spawn(self.token, limits, self.output_fd, timings)
        except BaseException:
            os.close(self.output_fd)
            raise
        self.lock, self.pidfd = threading.Lock(), _pidfd(self.pid)
        self.reader = rpc.FrameReader(self.sock.fileno())
        self.status: dict | None = None
        try:
            self.hello = self._send({"op": "hello"}, time.monotonic() + 10.0, 10.0)
        except WorkerDied:
            self.cleanup()                            # no descriptor or folder left behind
            raise
        if greet:
            self.greet()

    def greet(self, seconds: float = 10.0) -> dict:
        """The worker's first reply (its status: the layers it is under), read once; WorkerDied if it
        does not come within ``seconds``, and then no descriptor or folder is left behind."""
        if self.status is None:
            try:
                self.status = self._receive({"op": "hello"}, self.hello, time.monotonic() + seconds, seconds)[0]["status"]
            except WorkerDied:
                self.cleanup()
                raise
        return self.status

    def request(self, header: dict, seconds: float, payload: bytes = b"", most: int = 0) -> tuple[dict, bytes]:
        """The checked reply to ``header``, whose payload may have at most ``most`` bytes (only results
        have any); on any failure the worker is killed and WorkerDied raised."""
        deadline = time.monotonic() + seconds
        return self._receive(header, self._send(header, deadline, seconds, payload), deadline, seconds, most)

    def _send(self, header: dict, deadline: float, seconds: float, payload: bytes = b"") -> int:
        """Send one request, whole before ``deadline`` or the worker is ended; its id (for ``_receive``)."""
        rid = secrets.randbits(64)
        try:
            rpc.send_all(self.sock.fileno(), rpc.encode_frame(rid, header, payload), deadline)
        except rpc.Deadline:
            raise self._died(f"it did not take the grader's request within {whole_seconds(seconds)}: it stopped "
                             "reading") from None
        except (rpc.PeerGone, OSError):
            raise self._died("the worker process ended (it exited, crashed or was killed)") from None
        return rid

    def _receive(self, header: dict, rid: int, deadline: float, seconds: float, most: int = 0) -> tuple[dict, bytes]:
        """The checked reply to the request ``rid``; on any failure the worker is killed and WorkerDied raised."""
        try:
            got, reply, data = self.reader.read(deadline, most)
            check_reply(header, rid, got, reply)
        except rpc.Deadline:
            raise self._died(f"no answer within {whole_seconds(seconds)}", late=True) from None
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

    def call_many(self, fn: str, calls: list[tuple], seconds: float, echo: bool = False,
                  received: Received | None = None, each: float | None = None) -> tuple[dict, list]:
        """fn(*args, **kwargs) for each call in one round trip: the reply and one outcome per call. A call is
        (args, kwargs) or (args, kwargs, options): ``{"echo": True}`` makes its outcome a pair, the call's then
        its arguments' as they were right after it (``echo=True``: every call's); ``{"into": k}`` hands it call
        k's argument arrays holding its own values (the same objects); ``{"hold": True}`` reads its answer with
        the next call's (by default each answer is read right after its call). ``each``: the seconds one call may run
        in the worker before it fails alone (``seconds`` bounds the whole round trip). ``received``: the
        notebook's budget of result bytes, charged here with what arrives; the worker is told what is left
        (and refuses a result past it), and a reply longer than that is not read."""
        encoded, payload = encode_calls([c[:2] for c in calls])
        options = [_options(c, echo) for c in calls]
        encoded = [{**c, **o} for c, o in zip(encoded, options)]
        received = received or Received(rpc.MAX_PAYLOAD)
        request = {"op": "call_many", "fn": fn, "calls": encoded, "left": received.left, "of": received.total}
        if each is not None:
            request["each"] = each
        reply, data = self.request(request, seconds, payload, most=received.left)
        if not reply["ok"]:
            received.charge(len(data))                # no results: what arrived anyway (none, from a worker)
            return reply, []
        try:
            outcomes = decode_many(reply["many"], data, len(calls) + sum(bool(o.get("echo")) for o in options),
                                   received)
        except Exception as exc:  # noqa: BLE001 - ProtocolError, or anything else a forged value causes
            raise self._died(f"the worker sent results the grader cannot read: {str(exc)[:200]}") from None
        return reply, _paired(outcomes, options)

    def _died(self, why: str, late: bool = False) -> WorkerDied:
        self.kill()
        return WorkerDied(why, late)

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

    def _wait_ended(self, seconds: float) -> None:
        """Until the worker has ended (it was SIGKILLed), at most ``seconds``."""
        with self.lock:
            if self.pidfd is not None:
                rpc.readable(self.pidfd, seconds)                 # a pidfd is readable once its process ended

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
        if self.status is None:                       # never greeted: it may have made its cgroups (and
            self._wait_ended(2.0)                     # folder) after ``kill`` looked; once it has ended,
            self.groups = []                          # look again
            cgroups.kill_all(self.cgroups(), timeout=2.0)
        with self.lock:
            if self.pidfd is not None:
                os.close(self.pidfd)
                self.pidfd = None
        if self.output_fd >= 0:
            os.close(self.output_fd)
            self.output_fd = -1
        shutil.rmtree(self.workdir, ignore_errors=True)


def _pidfd(pid: int) -> int | None:
    """A descriptor that names this process for good (None where pidfds are missing). The worker was
    just started and has not answered yet, so the pid is still its own."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _exited(pidfd: int) -> bool:
    """A pidfd becomes readable when its process has ended."""
    return rpc.readable(pidfd)


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


def _options(call: tuple, echo: bool) -> dict:
    """The call's options as the worker reads them: echo (a bool) and into (an earlier call's index)."""
    given = call[2] if len(call) > 2 and isinstance(call[2], dict) else {}
    out = {"echo": True} if echo or given.get("echo") is True else {}
    if given.get("hold") is True:
        out["hold"] = True
    if type(given.get("into")) is int:
        out["into"] = given["into"]
    return out


def _paired(outcomes: list, options: list[dict]) -> list:
    """One outcome per call: an echoed call's with the echo that follows it, as a pair."""
    out, it = [], iter(outcomes)
    for o in options:
        first = next(it)
        out.append((first, next(it)) if o.get("echo") else first)
    return out


def cell_bytes(source: str) -> bytes:
    """A cell's source as sent to the worker (lone surrogates kept, as the notebook held them)."""
    return source.encode("utf-8", "surrogatepass")
