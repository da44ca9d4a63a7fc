"""Nothing outlives a grading run: children die with their parent, signals stop a run cleanly.

Every process a run starts is tied to the process that started it:

- ``die_with_parent(pid)``, called first thing in a child, asks the kernel to
  SIGKILL the child when its parent goes (``PR_SET_PDEATHSIG``), then checks
  the parent is still ``pid``: a parent that died before the request was made
  would otherwise never signal. The kernel signals when the parent *thread*
  ends, so a child must be started from a thread that lives as long as the run
  (the thread that runs the batch).
- the sandbox fork server ends when its control socket closes, which the
  kernel does when its owner dies, and, when it was started from the owner's
  main thread, also on SIGTERM as its parent dies (it then ends its workers).

``stop_on_signals()`` turns SIGINT, SIGTERM and SIGHUP into ``Stop``, raised
in the main thread once, except inside ``critical()`` (a record being
written), where it waits until the section ends.
"""
from __future__ import annotations

import ctypes
import os
import signal
from contextlib import contextmanager

PR_SET_PDEATHSIG = 1
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

try:
    _libc = ctypes.CDLL(None, use_errno=True)
except OSError:  # pragma: no cover - no C library to ask
    _libc = None


class Stop(BaseException):
    """A signal asked the run to stop; ``exit_code`` follows the shell's 128 + signal convention."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.name = signal.Signals(signum).name
        self.exit_code = 128 + signum


def die_with_parent(parent_pid: int, sig: int = signal.SIGKILL) -> None:
    """Get ``sig`` when the parent ends (SIGKILL unless the child cleans up on another), or now if
    the parent already ended."""
    if _libc is not None and hasattr(_libc, "prctl"):
        _libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
    if os.getppid() != parent_pid:               # the parent died before the request took effect
        os.kill(os.getpid(), sig)


class _Guard:
    depth = 0            # nesting of critical sections in the main thread
    pending = None       # a signal that arrived inside one
    raised = False       # Stop is raised once; later signals are ignored while the run cleans up


def _on_signal(signum, frame):
    if _Guard.raised:
        return
    if _Guard.depth:
        _Guard.pending = signum
        return
    _Guard.raised = True
    raise Stop(signum)


@contextmanager
def stop_on_signals():
    """Within this block SIGINT, SIGTERM and SIGHUP raise ``Stop`` (main thread only)."""
    previous = {s: signal.signal(s, _on_signal) for s in STOP_SIGNALS}
    _Guard.pending, _Guard.raised = None, False
    try:
        yield
    except Exception as exc:
        stop = stop_within(exc)
        if stop is None:
            raise
        raise stop from exc        # a stop wrapped on its way (Python 3.11: RuntimeError from a class body)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def stop_within(exc: BaseException) -> "Stop | None":
    """The Stop ``exc`` was raised from, if any: Python 3.11 wraps an exception raised while a class is
    made (a dataclass field's __set_name__, during a deferred import) in RuntimeError."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, Stop):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


@contextmanager
def critical():
    """Hold a stop signal until this block is done (e.g. a record half written)."""
    _Guard.depth += 1
    try:
        yield
    finally:
        _Guard.depth -= 1
        if not _Guard.depth and _Guard.pending is not None and not _Guard.raised:
            signum, _Guard.pending = _Guard.pending, None
            _Guard.raised = True
            raise Stop(signum)


def ignore_terminal_interrupt() -> None:
    """For children: Ctrl-C reaches the whole foreground group, but the run's main process decides."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def exit_now(code: int) -> None:
    """End a command-line process with ``code`` once its work is done: the atexit handlers run (the
    fork server is hung up, its workers end), stdout and stderr are flushed, and then the process
    leaves at once, without the interpreter's tear-down of every module and object (about 0.1 s for
    a grader that loaded numpy, matplotlib and nbgrader, each time a class is graded). Every file a
    run writes is closed and renamed into place before this point. Output that cannot be flushed (a
    full disk under ``grade > log.txt``, a reader gone) is said on fd 2 and the status is 120, as the
    interpreter's own exit gives: never a success with the output lost."""
    import atexit
    import sys
    atexit._run_exitfuncs()
    lost = None
    for stream in (sys.stdout, sys.stderr):
        if stream is None or getattr(stream, "closed", False):
            continue                                  # closed by the program: nothing left to write
        try:
            stream.flush()
        except (OSError, ValueError) as exc:
            lost = lost or exc
    if lost is not None:
        try:
            os.write(2, f"error: the command's output could not be written ({lost}); it is incomplete\n"
                        .encode("utf-8", "backslashreplace"))
        except OSError:
            pass
        code = 120
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)     # as sys.exit(code) ends
