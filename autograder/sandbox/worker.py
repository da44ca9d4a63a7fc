"""The sandboxed worker: runs a submission's cells with IPython and serves calls of its functions.

This runs in the same process as student code, so nothing here is trusted by
the grader: it only answers requests, and the grader checks every reply.
"""
from __future__ import annotations

import gc
import io
import os
import signal
import sys

import numpy as np

from . import rpc
from .convert import Screen, encode_results
from .origin import exception_text, exception_type, raised_in


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
    return {"type": exception_type(exc), "message": exception_text(exc)[:500]}


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
        each = header.get("each")
        each = float(each) if type(each) in (int, float) and 0 < each < 3600 else None
        left, total = header.get("left"), header.get("of")       # what the grader still accepts from the notebook
        budget = (left, total) if type(left) is int and type(total) is int else None
        results = list(_call_many_fn(fn, header.get("calls", []), payload, self.shell.user_ns, each,
                                     Screen(self.max_result, budget)))
        reply, data = encode_results(results, self.max_result, budget)
        return {"ok": True, "many": reply}, data


LATE_AT_MOST = 2          # questions of one batch that may run past their time before the rest are not asked


class Late(BaseException):
    """Raised in the student's function when its question has run past its time (``each`` seconds)."""


def _late(signum, frame):
    raise Late()


def _call_many_fn(fn, calls, payload, namespace, each: float | None = None, screen=None) -> list:
    """Each call's outcome, in order, each answer read (its arrays copied) right after its call, or with the
    next call not marked ``hold`` (a group of calls whose answers are read after the last of them: one array
    returned by every call shows as the last call's). A call marked ``echo`` is followed by its arguments as
    they were right after it (so the grader can see whether the function changed its inputs in place: plain
    arrays, compared there); a call marked ``into`` (an earlier call's index) gets that call's argument arrays,
    the same objects, holding its own values (a cache keyed on ``id()`` sees an old key). With ``each``, a call
    that runs past that many seconds fails alone (``late``); after ``LATE_AT_MOST`` such calls the rest are not
    asked. ``screen`` (``convert.Screen``): each answer checked as it is read, refused there past a budget."""
    kept, out, held, late = [], [], [], 0
    if each is not None:
        signal.signal(signal.SIGALRM, _late)                  # the student's cells may have replaced it
    for call in calls:
        args = _into([_decode_arg(a, payload) for a in call.get("args", [])], kept, call.get("into"))
        kwargs = {str(k): _decode_arg(v, payload) for k, v in call.get("kwargs", {}).items()}
        kept.append(args)
        if late >= LATE_AT_MOST:
            outcome = "error", {"type": "NotAsked", "message": f"not asked: {late} earlier calls did not return "
                                "within their time", "late": True}
        else:
            outcome = _timed(fn, args, kwargs, each, namespace)
            late += outcome[1].get("late") is True if outcome[0] == "error" else 0
        held.append(len(out))
        out.append(outcome)
        if call.get("echo") is True:
            out.append(("ok", tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args)))
        if call.get("hold") is not True:
            for i in held:
                out[i] = _read(out[i], screen)
            held = []
    return out


def _read(outcome: tuple, screen) -> tuple:
    """An answer as it is read: refused by ``screen`` (its arrays let go), else its arrays copied as they are now."""
    if outcome[0] != "ok":
        return outcome
    if screen is not None:
        outcome = screen(outcome[1])
    return ("ok", _snapshot(outcome[1])) if outcome[0] == "ok" else outcome


def _snapshot(value, depth: int = 0):
    """The value with its arrays copied (in tuples and lists too), as it is now."""
    if type(value) is np.ndarray:
        return value.copy()
    if type(value) in (tuple, list) and depth <= 4:
        return type(value)(_snapshot(v, depth + 1) for v in value)
    return value


def _timed(fn, args, kwargs, each, namespace):
    """("ok", value) or ("error", summary) of one call, under a timer of ``each`` seconds when given."""
    try:
        if each is not None:
            signal.setitimer(signal.ITIMER_REAL, each)
        try:
            value = fn(*args, **kwargs)
        finally:
            if each is not None:
                signal.setitimer(signal.ITIMER_REAL, 0)
        return "ok", value
    except Late:
        return "error", {"type": "TimeoutError", "message": f"did not return within {each:g} s", "late": True}
    except BaseException as exc:  # noqa: BLE001 - the student's errors, reported per call
        return "error", {**_summary(exc), **_where(exc, namespace)}


def _into(args: list, kept: list, index) -> list:
    """``args`` with each array written into the array at its place in call ``index``'s arguments (the same
    object, new values) where shapes and dtypes agree."""
    if type(index) is not int or not 0 <= index < len(kept):
        return args
    earlier = kept[index]
    for i, a in enumerate(args):
        old = earlier[i] if i < len(earlier) else None
        if isinstance(a, np.ndarray) and isinstance(old, np.ndarray) and old.shape == a.shape \
                and old.dtype == a.dtype and old.flags.writeable:
            np.copyto(old, a)
            args[i] = old
    return args


def _where(exc: BaseException, namespace: dict) -> dict:
    """Which notebook function raised, and the name a NameError (or the module a ModuleNotFoundError) missed
    (the grader checks both)."""
    try:
        missing = getattr(exc, "name", None) if isinstance(exc, (NameError, ModuleNotFoundError)) else None
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

