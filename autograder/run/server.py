"""The sandbox fork server of this grading process, as one object (``SERVER``).

A grading process (a batch's child, a pool process, a Dask worker, ``watch``'s child, the nbgrader door)
keeps one fork server for every submission it grades. It may be started ahead (``launch_ahead``: it
takes about a second to be ready) and is adopted by the first ``get``; one that died is replaced. A
process forked from this one does not own its parent's: it closes its copy of the socket, so that the
fork server still sees its owner go.
"""
from __future__ import annotations

import atexit
import os
import threading
from contextlib import contextmanager
from ..sandbox.launch import Launch


class ProcessServer:
    def __init__(self):
        self.lock = threading.Lock()
        self.server = None            # the ForkServer in use
        self.launch = None            # a fork server process started ahead, adopted by ``get``
        self.holders = 0              # ``held`` blocks running now
        self.timer = None             # ends the fork server once nobody has held it for a while
        self.kept = False             # ``get`` was called: the fork server stays for this process's life
        os.register_at_fork(after_in_child=self._forget)

    def get(self):
        """This process's fork server (the one started ahead, else one started now), replaced if it died."""
        with self.lock:
            self._cancel()
            self.kept = True
            return self._get()

    def _get(self):
        from .hardened import grading_server  # (the rubric: numpy, when first wanted)
        if self.server is None or not self.server.alive():
            launch, self.launch = self.launch, None
            self.server = grading_server(launch)
            atexit.register(self.server.close)
        return self.server

    @contextmanager
    def held(self, idle: float):
        """This process's fork server for one piece of work; it ends ``idle`` seconds after the last holder
        lets go, unless another takes it first. A long-lived process (formgrader's Jupyter server, where
        the Autograde button grades) keeps no fork server and its ready workers between autogrades."""
        with self.lock:
            self._cancel()
            self.holders += 1
            try:
                server = self._get()
            except BaseException:
                self.holders -= 1
                raise
        try:
            yield server
        finally:
            with self.lock:
                self.holders -= 1
                if not self.holders and not self.kept:
                    self.timer = threading.Timer(idle, self._end_idle)
                    self.timer.daemon = True           # never keeps the process from ending
                    self.timer.start()

    def _end_idle(self) -> None:
        with self.lock:
            if self.holders or self.timer is not threading.current_thread():
                return                     # held again, or a later let-go timed this
            server, self.server, self.timer = self.server, None, None
        if server is not None:
            server.close()

    def _cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def launch_ahead(self) -> None:
        """Start the fork server now, without waiting for it."""
        with self.lock:
            if self.launch is None and (self.server is None or not self.server.alive()):
                self.launch = Launch()

    def drop_launch(self) -> None:
        """A fork server started ahead that grading never used ends now."""
        with self.lock:
            launch, self.launch = self.launch, None
        if launch is not None:
            launch.abandon()

    def _forget(self) -> None:
        """In a forked child: the parent's fork server (and one it started ahead) is not ours."""
        self.lock = threading.Lock()
        self.holders, self.timer, self.kept = 0, None, False
        for held in (self.server, self.launch):
            if held is not None:
                try:
                    held.control.close()
                except OSError:
                    pass
        self.server = self.launch = None


SERVER = ProcessServer()
