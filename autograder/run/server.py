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


class ProcessServer:
    def __init__(self):
        self.lock = threading.Lock()
        self.server = None            # the ForkServer in use
        self.launch = None            # a fork server process started ahead, adopted by ``get``
        os.register_at_fork(after_in_child=self._forget)

    def get(self):
        """This process's fork server (the one started ahead, else one started now), replaced if it died."""
        from .hardened import grading_server
        with self.lock:
            if self.server is None or not self.server.alive():
                launch, self.launch = self.launch, None
                self.server = grading_server(launch)
                atexit.register(self.server.close)
            return self.server

    def launch_ahead(self) -> None:
        """Start the fork server now, without waiting for it."""
        from ..sandbox.launch import Launch
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
        for held in (self.server, self.launch):
            if held is not None:
                try:
                    held.control.close()
                except OSError:
                    pass
        self.server = self.launch = None


SERVER = ProcessServer()
