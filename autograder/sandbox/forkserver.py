"""The fork server: a long-lived process that pre-imports numpy, IPython and matplotlib (Agg)
and forks one sandboxed worker per submission.

It holds nothing secret (no reference engine, rubric, hidden tests or
gradebook; see ``autograder.sandbox``). The grader talks to it over a
SOCK_SEQPACKET pair: a JSON request plus, through SCM_RIGHTS, the worker's end
of a fresh socket pair; the reply names the worker's pid and echoes the request's token (a grader
that gave up waiting for one reply tells it from the next).

    python -m autograder.sandbox.forkserver CONTROL_FD SANDBOX_ROOT [PARENT_PID]

With PARENT_PID it gets SIGTERM when that process (the grader) dies, even
while it is still starting, and then ends every worker.
"""
from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import sys
import time
from pathlib import Path

from . import cgroups, layers, orphans, seccomp
from .status import texts
from .namespaces import PidNamespaces
from .limits import Limits
from ..lifecycle import die_with_parent

SEND_SECONDS = 10.0          # a reply the grader does not take in this time is dropped


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    control = socket.socket(fileno=int(argv[0]))
    root = Path(argv[1])
    for sig in (signal.SIGTERM, signal.SIGHUP):             # so that the reaper below still runs
        signal.signal(sig, _exit_cleanly)
    try:
        if len(argv) > 2:
            die_with_parent(int(argv[2]), signal.SIGTERM)
        from .worker import make_shell, warm_imports, warm_shell  # (after die_with_parent: numpy loads slowly)
        warm_imports()
        layers.read_paths()                                  # computed once, inherited by every worker
        seccomp.prepare()                                    # built once, loaded by every worker
        shell = make_shell()
        warm_shell(shell)                                    # last: it freezes what the workers inherit
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)      # workers are reaped automatically
        orphans.become_subreaper()                           # what a worker leaves behind comes here, and ends
        _send(control, {"ready": True, "pid": os.getpid()})
        _serve(control, root, shell, PidNamespaces())
    except OSError:
        pass                                               # the grader went away
    finally:
        try:
            _reap_everything(root)
        except SystemExit:                 # the signal came before the reaper could ignore it: reap again
            _reap_everything(root)
    return 0


_reaping = False


def _exit_cleanly(signum, frame):
    if not _reaping:
        raise SystemExit(0)


def _reap_everything(root: Path) -> None:
    """The grader is gone (maybe killed): end every worker's processes, remove their folders. A grader that
    dies sends SIGTERM (its death signal) just as its socket closes: the signal must not cut this short
    (it left the sandbox folder, emptied or not, in the temporary folder)."""
    global _reaping
    _reaping = True
    for workdir in root.iterdir() if root.is_dir() else ():
        cgroups.kill_all(cgroups.find(workdir.name), timeout=2.0)
    orphans.end_children(timeout=2.0)
    shutil.rmtree(root, ignore_errors=True)


def _serve(control, root: Path, shell, pid_namespaces: PidNamespaces) -> None:
    adopted = orphans.Orphans()
    while True:
        if not select.select([control], [], [], orphans.SWEEP_SECONDS)[0]:
            adopted.sweep()                                   # idle: end what outlived its worker
            continue
        try:
            msg, fds, _, _ = socket.recv_fds(control, 65536, 2)
        except OSError:
            return
        if not msg:
            return
        request = {}
        try:
            request = json.loads(msg)
            if request.get("op") != "spawn" or len(fds) != 2:
                raise ValueError("bad request")
            reply = {"pid": _spawn(control, fds, request, root, shell, pid_namespaces)}
            adopted.started(reply["pid"])
        except (ValueError, KeyError, TypeError, OSError, AttributeError) as exc:
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            for fd in fds:
                os.close(fd)
        reply["token"] = request.get("token") if isinstance(request, dict) else None
        _send(control, reply)


def _send(control, message: dict) -> None:
    """One message to the grader, sent within ``SEND_SECONDS`` or dropped: a grader that reads nothing for
    that long gave up waiting for it (its spawn's deadline passed; a worker it names leaves when it reads
    the hang-up of the socket the grader closed). The wait for the next request has no deadline: the
    fork server lives as long as its grader, and ends when the grader hangs up or dies."""
    control.settimeout(SEND_SECONDS)
    try:
        control.send(json.dumps(message).encode())
    except (TimeoutError, BlockingIOError):
        pass
    finally:
        control.settimeout(None)


def _spawn(control, fds: list[int], request: dict, root: Path, shell, pid_namespaces: PidNamespaces) -> int:
    asked = time.perf_counter()
    pid = pid_namespaces.fork()                               # the worker is the init of a new PID namespace
    if pid:
        return pid
    marks = [("spawn asked", asked), ("fork", time.perf_counter())] if request.get("timings") is True else None
    code = 1
    try:
        control.close()                                       # the worker must not reach the fork server
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        _child(*fds, request, root, shell, marks)
        code = 0
    except BaseException:  # noqa: BLE001 - nothing may escape a forked child
        pass
    finally:
        os._exit(code)


def _child(sock_fd: int, output_fd: int, request: dict, root: Path, shell, marks: list | None = None) -> None:
    """``marks``: (step, time.perf_counter()) as each step is done, reported in the worker's status as
    "timings" (only when the spawn request asked: the layer-cost benchmark)."""
    mark = (lambda name: marks.append((name, time.perf_counter()))) if marks is not None else None
    limits = Limits(**request.get("limits", {}))
    token = request["token"]
    workdir = root / token
    workdir.mkdir(mode=0o700)
    dirs = cgroups.create(token, limits.processes, limits.memory_bytes) if cgroups.available() else []
    if mark:
        mark("folder and cgroup created")
    _redirect_std(output_fd)
    os.closerange(3, sock_fd)
    os.closerange(sock_fd + 1, 1 << 16)
    if mark:
        mark("descriptors closed")
    status = texts(layers.apply_all(str(workdir), dirs, limits, mark))   # as records show them
    from .worker import Worker  # (main loaded it; named in the child)
    if marks is not None:
        status["timings"] = json.dumps(marks)
    Worker(sock_fd, shell, limits.output_bytes, limits.result_bytes, status).serve()


def _redirect_std(output_fd: int) -> None:
    """fd 0 from /dev/null; fds 1 and 2 (C-level output, subprocesses) to the grader's own file.

    The grader created that file and reads it through its own descriptor, so nothing the
    student does in the working folder (links, FIFOs, swaps) changes what the grader reads."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(output_fd, 1)
    os.dup2(output_fd, 2)
    os.close(output_fd)


if __name__ == "__main__":
    sys.exit(main())
