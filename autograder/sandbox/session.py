"""Grader side: the fork server process and one worker session per submission.

A ``WorkerSession`` asks the fork server for a worker, sends it the
submission's cells one at a time, then calls the student's functions by RPC
under wall-clock limits. A worker that dies or overruns is killed with every
process it started (cgroup, sandbox uid, process group) and, within the
spawn budget, replaced by a fresh one that re-runs the cells that did not
crash it. Everything received is checked before use.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from . import cgroups, layers, rpc
from .limits import Limits

STRING_MARKER = "<a string>"


class ForkServer:
    """The long-lived parent of all workers of this grader process."""

    def __init__(self):
        if cgroups.available():
            cgroups.prune()
        self.root = Path(tempfile.mkdtemp(prefix="autograder-sandbox-"))
        os.chmod(self.root, 0o711)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.root), "LANG": "C.UTF-8", "MPLBACKEND": "Agg",
               "MPLCONFIGDIR": str(self.root), "IPYTHONDIR": str(self.root / ".ipython"),
               **layers.thread_env()}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "autograder.sandbox.forkserver", str(theirs.fileno()), str(self.root)],
            pass_fds=[theirs.fileno()], env=env, cwd=self.root, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        theirs.close()
        self.control = ours
        self.control.settimeout(60)
        self.lock = threading.Lock()                         # one spawn at a time (Dask runs threads)
        hello = json.loads(self.control.recv(65536) or b"{}")
        if not hello.get("ready"):
            raise RuntimeError("the sandbox fork server did not start")

    def spawn(self, token: str, limits: Limits) -> tuple[int, socket.socket]:
        grader_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            request = json.dumps({"op": "spawn", "token": token, "limits": limits.to_dict()}).encode()
            with self.lock:
                socket.send_fds(self.control, [request], [worker_end.fileno()])
                reply = json.loads(self.control.recv(65536) or b"{}")
        except OSError as exc:
            grader_end.close()
            raise RuntimeError(f"the sandbox fork server is not answering ({exc})") from None
        finally:
            worker_end.close()
        if "pid" not in reply:
            grader_end.close()
            raise RuntimeError(f"the fork server could not start a worker: {reply}")
        return int(reply["pid"]), grader_end

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.control.close()
        shutil.rmtree(self.root, ignore_errors=True)


class WorkerDied(Exception):
    """The worker exited, crashed or was killed for overrunning a limit."""


class Worker:
    """One live sandboxed process."""

    def __init__(self, server: ForkServer, limits: Limits):
        self.token = secrets.token_hex(8)
        self.limits = limits
        self.workdir = server.root / self.token
        self.pid, self.sock = server.spawn(self.token, limits)
        self.reader = rpc.FrameReader(self.sock.fileno())
        self.status = self.request({"op": "hello"}, 10.0)[0].get("status", {})

    def request(self, header: dict, seconds: float, payload: bytes = b"") -> tuple[dict, bytes]:
        rid = secrets.randbits(64)
        deadline = time.monotonic() + seconds
        self.reader.drain()
        try:
            rpc.send_all(self.sock.fileno(), rpc.encode_frame(rid, header, payload), deadline)
            _, reply, data = self.reader.read(rid, deadline)
        except rpc.Deadline:
            self.kill()
            raise WorkerDied(f"no answer within {seconds:g} s") from None
        except (rpc.PeerGone, OSError):
            self.kill()
            raise WorkerDied("the worker process ended (it exited, crashed or was killed)") from None
        return reply, data

    def fd_output(self, cap: int) -> str:
        try:
            with open(self.workdir / "fd_output.log", "rb") as f:
                return f.read(cap).decode("utf-8", "replace")
        except OSError:
            return ""

    def kill(self) -> None:
        """SIGKILL the worker and everything it started; no process survives."""
        groups = cgroups.find(self.token)
        emptied = cgroups.kill_all(groups) if groups else False
        if os.geteuid() == 0 and not emptied:
            _kill_uid(layers.sandbox_uid(self.pid))
        for target in (lambda: os.killpg(self.pid, signal.SIGKILL), lambda: os.kill(self.pid, signal.SIGKILL)):
            try:
                target()
            except OSError:
                pass
        try:
            self.sock.close()
        except OSError:
            pass

    def cleanup(self) -> None:
        self.kill()
        shutil.rmtree(self.workdir, ignore_errors=True)


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


def _rebuild(node, arrays, depth):
    if depth > 6 or not isinstance(node, dict):
        raise rpc.ProtocolError("bad value tree")
    kind = node.get("kind")
    if kind == "none":
        return None
    if kind == "str":
        return STRING_MARKER
    if kind in ("tuple", "list"):
        items = [_rebuild(n, arrays, depth + 1) for n in node.get("items", [])]
        return tuple(items) if kind == "tuple" else items
    if kind == "array" and isinstance(node.get("index"), int) and 0 <= node["index"] < len(arrays):
        return arrays[node["index"]]
    raise rpc.ProtocolError("bad value tree")


def encode_calls(calls) -> tuple[list[dict], bytes]:
    """Several (args, kwargs) with their arrays in one shared payload."""
    arrays: list = []
    encoded = [{"args": [_enc(a, arrays) for a in args], "kwargs": {k: _enc(v, arrays) for k, v in kw.items()}}
               for args, kw in calls]
    descs, payload = rpc.pack_arrays(arrays)
    fix = lambda v: descs[v["array"]] if isinstance(v, dict) else v  # noqa: E731
    return [{"args": [fix(a) for a in c["args"]], "kwargs": {k: fix(v) for k, v in c["kwargs"].items()}}
            for c in encoded], payload


def _enc(a, arrays: list):
    if isinstance(a, np.ndarray):
        arrays.append(a)
        return {"array": len(arrays) - 1}
    if isinstance(a, (bool, int, float, str)) or a is None:
        return a
    raise TypeError(f"cannot send {type(a).__name__} to the worker")


def decode_many(reply: dict, payload: bytes) -> list:
    """Per call: ("ok", value) or ("raised" | "refused", type, message), from checked wire data."""
    many = reply.get("many") if isinstance(reply.get("many"), dict) else {}
    arrays = [rpc.unpack_array(d, payload) for d in many.get("arrays", [])[:100_000]]
    out = []
    for item in many.get("items", []):
        if not isinstance(item, dict):
            raise rpc.ProtocolError("bad result item")
        if item.get("ok"):
            out.append(("ok", _rebuild(item.get("tree"), arrays, 0)))
        else:
            err = item.get("error") if isinstance(item.get("error"), dict) else {}
            out.append(("raised" if item.get("raised") else "refused", str(err.get("type", "Error"))[:80],
                        str(err.get("message", ""))[:500]))
    return out

