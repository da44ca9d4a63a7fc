"""The sandboxed worker: runs a submission's cells with IPython and serves calls of its functions.

This runs in the same process as student code, so nothing here is trusted by
the grader: it only answers requests, and the grader checks every reply.
"""
from __future__ import annotations

import gc
import io
import os
import sys

import numpy as np

from . import rpc
from .convert import encode_results
from .origin import raised_in


class CappedText(io.TextIOBase):
    """A text sink that keeps the first ``cap`` characters and counts the rest."""

    def __init__(self, cap: int):
        self.cap, self.parts, self.kept, self.dropped = cap, [], 0, 0

    def writable(self):
        return True

    def write(self, s):
        s = str(s)
        room = self.cap - self.kept
        if room > 0:
            self.parts.append(s[:room])
            self.kept += min(room, len(s))
        self.dropped += max(0, len(s) - max(room, 0))
        return len(s)

    def text(self) -> str:
        tail = f"\n[... {self.dropped} more characters not kept]" if self.dropped else ""
        return "".join(self.parts) + tail


def _summary(exc: BaseException) -> dict:
    return {"type": type(exc).__name__[:80], "message": str(exc)[:500]}


class Worker:
    def __init__(self, fd: int, shell, max_output: int, max_result: int, status: dict):
        self.fd, self.shell, self.status = fd, shell, status
        self.max_result = max_result
        self.reader = rpc.FrameReader(fd)
        self.out, self.err = CappedText(max_output // 2), CappedText(max_output // 2)

    def serve(self) -> None:
        """Answer requests until the grader hangs up. A process the student forked off this one
        leaves as soon as it gets back here, so it can never take or answer a request."""
        sys.stdout, sys.stderr = self.out, self.err
        me = os.getpid()
        while True:
            self._only(me)
            try:
                rid, header, payload = self.reader.read(None)
            except (rpc.PeerGone, rpc.ProtocolError):
                return
            reply, data = self._dispatch(header, payload)
            reply["op"] = header.get("op")
            self._only(me)
            rpc.send_all(self.fd, rpc.encode_frame(rid, reply, data))

    @staticmethod
    def _only(pid: int) -> None:
        if os.getpid() != pid:
            os._exit(0)

    def _dispatch(self, header, payload):
        op = header.get("op")
        try:
            if op == "hello":
                return {"ok": True, "status": self.status}, b""
            if op == "run_cell":                     # the source is the payload
                reply = self._run_cell(payload.decode("utf-8", "surrogatepass"))
                return {**reply, "defined": self._defined(header)}, b""
            if op == "functions":
                return {"ok": True, "defined": self._defined(header)}, b""
            if op == "call_many":
                return self._call_many(header, payload)
            if op == "output":
                return {"ok": True, "stdout": self.out.text(), "stderr": self.err.text()}, b""
        except Exception as exc:  # noqa: BLE001 - report, keep serving
            return {"ok": False, "error": _summary(exc)}, b""
        return {"ok": False, "error": {"type": "ProtocolError", "message": f"unknown op {op!r}"}}, b""

    def _defined(self, header: dict) -> list:
        """Which of the names the grader asked about are callables in the notebook's namespace now."""
        ns = self.shell.user_ns
        return [n for n in header.get("names", []) if callable(ns.get(n))]

    def _run_cell(self, source: str) -> dict:
        result = self.shell.run_cell(source, store_history=False)
        exc = result.error_before_exec or result.error_in_exec
        return {"ok": exc is None, "error": _summary(exc) if exc is not None else None}

    def _call_many(self, header, payload):
        fn = self.shell.user_ns.get(str(header.get("fn")))
        if not callable(fn):
            return {"ok": False, "error": {"type": "NameError", "message": f"{header.get('fn')} is not defined"}}, b""
        results = list(_call_many_fn(fn, header.get("calls", []), payload, self.shell.user_ns))
        left, total = header.get("left"), header.get("of")       # what the grader still accepts from the notebook
        reply, data = encode_results(results, self.max_result,
                                     (left, total) if type(left) is int and type(total) is int else None)
        return {"ok": True, "many": reply}, data


def _call_many_fn(fn, calls, payload, namespace):
    """Each call's outcome; a call marked ``echo`` is followed by its arguments as they are after it (so the
    grader can see whether the function changed its inputs in place: plain arrays, compared there)."""
    for call in calls:
        args = [_decode_arg(a, payload) for a in call.get("args", [])]
        kwargs = {str(k): _decode_arg(v, payload) for k, v in call.get("kwargs", {}).items()}
        try:
            yield "ok", fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - the student's errors, reported per call
            yield "error", {**_summary(exc), **_where(exc, namespace)}
        if call.get("echo") is True:
            yield "ok", tuple(args)


def _where(exc: BaseException, namespace: dict) -> dict:
    """Which notebook function raised, and the name a NameError missed (the grader checks both)."""
    try:
        missing = getattr(exc, "name", None) if isinstance(exc, NameError) else None
        return {"where": raised_in(exc, namespace), "missing": missing if type(missing) is str else None}
    except Exception:  # noqa: BLE001 - a student's odd exception object: report it without the extras
        return {}


def _decode_arg(arg, payload):
    if isinstance(arg, dict) and "dtype" in arg:
        return rpc.unpack_array(arg, payload)
    return arg


def make_shell():
    """A plain IPython shell (no history file); `!cmd` and script magics are refused, %matplotlib keeps Agg."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    cfg = Config()
    cfg.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=cfg)

    def refuse(*args, **kwargs):
        print("[grader] shell commands are not run when grading", file=sys.stderr)

    shell.system = shell.system_raw = shell.system_piped = refuse
    shell.getoutput = lambda *a, **k: refuse() or ""
    magics = shell.magics_manager.magics
    for name in ("bash", "sh", "script", "system", "sx", "perl", "ruby", "python3", "python"):
        magics["cell"].pop(name, None)
    for name in ("system", "sx", "pip", "conda"):
        magics["line"][name] = refuse
    magics["line"]["matplotlib"] = lambda line="": None
    return shell


WARM_CELL = """import numpy as np
def _grader_warm_up(x):
    return np.exp(x - x.max(axis=-1, keepdims=True)) @ x.T
_grader_warm_up(np.ones((2, 2)))
del _grader_warm_up, np
"""


def warm_shell(shell) -> None:
    """Run one cell of our own before any worker is forked: IPython builds its compiler, AST and
    display machinery lazily on the first cell, which each worker would otherwise pay for (about
    2.5 ms). The cell leaves no name behind; then the fork server's objects are frozen out of the
    garbage collector, so a worker's collections never touch (and copy) the pages it inherited."""
    names = set(shell.user_ns)
    shell.run_cell(WARM_CELL, store_history=False)
    for name in set(shell.user_ns) - names:
        del shell.user_ns[name]
    gc.collect()
    gc.freeze()


def warm_imports() -> None:
    """What the fork server loads once so every worker starts in milliseconds."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401
    np.zeros(1) @ np.zeros(1)
    os.environ.setdefault("MPLBACKEND", "Agg")

