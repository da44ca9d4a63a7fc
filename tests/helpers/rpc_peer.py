"""A fake worker on the other end of a WorkerHandle: it answers each request with whatever a test says."""
from __future__ import annotations

import socket
import subprocess
import threading
import time

from autograder.sandbox import rpc
from autograder.sandbox.limits import Limits
from autograder.sandbox.handle import WorkerHandle


def hello(rid: int, header: dict) -> bytes:
    return rpc.encode_frame(rid, {"op": "hello", "ok": True, "status": {"fake": "yes"}})


class FakeServer:
    """Stands in for the fork server: the 'worker' is a thread answering with ``answer(rid, header)``."""

    def __init__(self, root, answer, first=hello):
        self.root, self.answer, self.first, self.procs = root, answer, first, []

    def spawn(self, token, limits, output_fd, timings=False):
        ours, theirs = socket.socketpair()
        proc = subprocess.Popen(["sleep", "60"], start_new_session=True)   # a pid for kill() to end
        self.procs.append(proc)
        threading.Thread(target=self._serve, args=(theirs,), daemon=True).start()
        return proc.pid, ours

    def _serve(self, sock):
        reader, answers = rpc.FrameReader(sock.fileno()), [self.first, self.answer]
        try:
            for answer in answers:
                rid, header, _ = reader.read(time.monotonic() + 30)
                sock.sendall(answer(rid, header))
            sock.recv(1)
        except (OSError, rpc.ProtocolError, rpc.PeerGone, rpc.Deadline):
            pass
        finally:
            sock.close()

    def close(self):
        for proc in self.procs:
            proc.kill()
            proc.wait()


class DeafServer(FakeServer):
    """A forged worker that answers its first request (hello) and then never reads again, holding its end of
    the socket open: what a student can make a real worker do. ``stopped`` is set once it stopped reading."""

    def __init__(self, root):
        super().__init__(root, answer=None)
        self.stopped, self.hung_up = threading.Event(), threading.Event()

    def _serve(self, sock):
        try:
            rid, header, _ = rpc.FrameReader(sock.fileno()).read(time.monotonic() + 30)
            sock.sendall(self.first(rid, header))
            self.stopped.set()
            while not self.hung_up.wait(0.05):          # reads nothing, closes nothing, until the test ends
                pass
        except (OSError, rpc.ProtocolError, rpc.PeerGone, rpc.Deadline):
            pass
        finally:
            sock.close()

    def close(self):
        self.hung_up.set()
        super().close()


def handle_answering(tmp_path, answer) -> tuple[WorkerHandle, FakeServer]:
    server = FakeServer(tmp_path, answer)
    return WorkerHandle(server, Limits()), server
