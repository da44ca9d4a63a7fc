"""nbgrader's own command line for the tests, without paying its import for every command.

Each ``python -m nbgrader ...`` spends about 2 s of CPU importing nbgrader (SQLAlchemy, nbconvert,
jupyter_server, setuptools) before it does anything; the suite runs hundreds of them. Here one helper
process per test process imports nbgrader once and forks a child for each command: the child takes the
command's folder, environment, arguments and output files, runs nbgrader's real ``main`` and exits with its
status, as ``python -m nbgrader`` would (its folder first on ``sys.path``, its own process group, stdin
from /dev/null). Only the import is shared, and the alembic head nbgrader stamps a new gradebook with (it
asks a fresh ``alembic heads`` process each time, 2 s more): every command still reads its config,
gradebook and files afresh. ``run_nbgrader`` keeps the signature and errors of ``autograder.course.nbgrader_cli.run_nbgrader``
(``nbgrader``: ``subprocess.run``'s result);
where the helper cannot start (or ``NBGRADER_FORK=0``), commands run as plain subprocesses.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from autograder.course.nbgrader_cli import tool_env

_SERVE = r'''
import json, logging, os, sys, threading, traceback
from nbgrader.apps import nbgraderapp
import nbgrader
import nbgrader.api
from autograder.gradebook.nbgrader_api import _alembic_head
ENTRY = os.path.join(os.path.dirname(nbgrader.__file__), "__main__.py")
HEAD = _alembic_head()
nbgrader.api.get_alembic_version = lambda: HEAD     # what its `alembic heads` process prints, read once


def _child(req):
    os.setpgrp()
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, req["stdout"], os.O_WRONLY), (2, req["stderr"], os.O_WRONLY)):
        new = os.open(path, flags)
        os.dup2(new, fd)
        os.close(new)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    sys.path[0] = req["cwd"]                   # as `python -m` puts the working folder first
    sys.argv = [ENTRY, *req["args"]]
    code = 0
    try:
        nbgraderapp.main()
    except SystemExit as exc:
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        traceback.print_exc()
        code = 1
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


print(json.dumps({"ready": threading.active_count() == 1}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        _child(req)
    print(json.dumps({"pid": pid}), flush=True)
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"status": os.waitstatus_to_exitcode(status)}), flush=True)
'''


class _Zygote:
    """One per test process, started on first use; None where it cannot serve (plain subprocesses then)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.proc: subprocess.Popen | None = None
        self.failed = os.environ.get("NBGRADER_FORK") == "0"

    def start(self) -> bool:
        if self.failed:
            return False
        if self.proc is not None and self.proc.poll() is None:
            return True
        self.proc = subprocess.Popen([sys.executable, "-c", _SERVE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, env=tool_env(), cwd=tempfile.gettempdir())
        reply = self._read(120)
        if not (reply and reply.get("ready")):
            self._stop()
            self.failed = True
        return not self.failed

    def _read(self, timeout: float | None) -> dict | None:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else None

    def _stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def run(self, args: list[str], cwd: Path, timeout: float | None) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory(prefix="nbgrader-fork-") as tmp:
            out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
            out.touch()
            err.touch()
            request = {"args": args, "cwd": str(Path(cwd).resolve()), "env": tool_env(), "stdout": str(out),
                       "stderr": str(err)}
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            pid = self._read(60)["pid"]
            reply = self._read(timeout)
            if reply is None:                                 # past its time: the command's whole group goes
                os.killpg(pid, signal.SIGKILL)
                self._read(60)
                raise subprocess.TimeoutExpired([sys.executable, "-m", "nbgrader", *args], timeout,
                                                out.read_text(errors="replace"), err.read_text(errors="replace"))
            return subprocess.CompletedProcess([sys.executable, "-m", "nbgrader", *args], reply["status"],
                                               out.read_text(errors="replace"), err.read_text(errors="replace"))


_ZYGOTE_PROCESS = _Zygote()


def nbgrader(args: list[str], cwd: Path, timeout: float | None = None) -> subprocess.CompletedProcess:
    """``python -m nbgrader ARGS`` in ``cwd``, whatever its status (``subprocess.run``'s result)."""
    with _ZYGOTE_PROCESS.lock:
        if _ZYGOTE_PROCESS.start():
            return _ZYGOTE_PROCESS.run(args, cwd, timeout)
    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=tool_env(), capture_output=True,
                          text=True, timeout=timeout)


def run_nbgrader(args: list[str], cwd: Path, what: str, timeout: float | None = None) -> subprocess.CompletedProcess:
    """``python -m nbgrader ARGS`` in ``cwd``; raises RuntimeError with nbgrader's output on failure."""
    proc = nbgrader(args, cwd, timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"nbgrader {what} failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc
