"""Starting the fork server process, without waiting for it (and without importing numpy here).

The fork server takes about a second to be ready (it imports numpy, IPython and matplotlib and
warms a shell), so a batch starts it first thing, before its own imports and checks, and waits
for its hello only when the first worker is wanted (``forkclient.ForkServer`` adopts a ``Launch``).
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from . import cgroups
from .layers import thread_env


class Launch:
    """A fork server process just started: its sandbox folder, the process, our end of its socket."""

    def __init__(self, python_path: str | None = None):
        """``python_path``: a folder put first on the fork server's ``sys.path`` (the tests use it to
        simulate a system-wide install of this package)."""
        if cgroups.available():
            cgroups.prune()
        self.root = Path(tempfile.mkdtemp(prefix="autograder-sandbox-"))
        os.chmod(self.root, 0o711)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.root), "LANG": "C.UTF-8", "MPLBACKEND": "Agg",
               "MPLCONFIGDIR": str(self.root), "IPYTHONDIR": str(self.root / ".ipython"),
               **thread_env(), **({"PYTHONPATH": python_path} if python_path else {})}
        # Parent death is signalled when the starting *thread* ends: only the main thread lives as long
        # as this process (Dask starts servers from pool threads; those rely on the socket closing).
        parent = [str(os.getpid())] if threading.current_thread() is threading.main_thread() else []
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "autograder.sandbox.forkserver", str(theirs.fileno()), str(self.root),
                 *parent], pass_fds=[theirs.fileno()], env=env, cwd=self.root, start_new_session=True,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        finally:
            theirs.close()
        self.control = ours
        self.control.settimeout(60)

    def abandon(self) -> None:
        """Not used after all: hang up (the fork server ends) and remove its folder."""
        hang_up(self.control, self.proc, self.root)


def hang_up(control: socket.socket, proc: subprocess.Popen, root: Path) -> None:
    """Close the fork server's socket (it ends every worker it holds and leaves), kill it if it lingers,
    and remove its folder."""
    import shutil
    control.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    shutil.rmtree(root, ignore_errors=True)
