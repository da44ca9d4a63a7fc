"""Student code that makes its sandboxed worker stop reading its socket (issue 35, item 1), submissions that
hold it, and the grader's write as it was before that issue, to show what each watchdog catches where a
deadline is missing.

A worker answers one request at a time, so a cell that stops it reading still gets its reply to the grader;
the next request (a cell of megabytes, a call with large arguments) then fills the socket's buffer, and a
grader that waits for the worker to take it all waits for ever.
"""
from __future__ import annotations

import json
import os
import select
import time
from pathlib import Path

from autograder.sandbox import rpc
from autograder.sandbox.limits import Limits

STOPS_READING = {
    # the worker's reads sleep: it takes no more bytes, and still writes its reply
    "sleeps-in-read": "import os, time\nos.read = lambda fd, n: time.sleep(3600)\n",
    # the same, deaf to every signal but SIGKILL (which is the grader's)
    "signal-proof": ("import os, signal, time\n"
                     "def _deaf(fd, n):\n"
                     "    signal.pthread_sigmask(signal.SIG_BLOCK, range(1, signal.NSIG))\n"
                     "    while True:\n"
                     "        time.sleep(3600)\n"
                     "os.read = _deaf\n"),
    # closes nothing and never reads: the worker's reader is pointed at a socket nobody writes to
    "reads-elsewhere": ("import gc, socket\n"
                        "_quiet = socket.socketpair()\n"
                        "for _o in gc.get_objects():\n"
                        "    if type(_o).__name__ == 'FrameReader':\n"
                        "        _o.fd = _quiet[0].fileno()\n"),
}
BIG_CELL = "# " + "x" * (2 << 20) + "\n"          # 2 MiB: ten times a socket's buffer
# short enough for tests of seconds: a stopped worker costs 2 s. The watchdogs fire well after a grading
# that deadlines end (the submission's 30 s in, its grading process's 40 s in): a door test that passes saw
# no watchdog act (``ended_by_deadline``)
SHORT = Limits(cell_seconds=2, call_seconds=2, total_seconds=20, spawns=2, overrun_seconds=10)
WATCHDOG = "watchdog"
STOPPED = "stopped reading"


def ended_by_deadline(integrity) -> bool:
    """Whether a record says a worker was ended for not reading, and no watchdog had to act."""
    return any(STOPPED in line for line in integrity) and not any(WATCHDOG in line for line in integrity)
NOTEBOOK = "ex2_causal_mask.ipynb"
DEAF = "deaf"                                        # the student whose worker stops reading


def code_cell(source: str) -> dict:
    return {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": source}


def plant(folder: Path, stop: str = "sleeps-in-read", at: str = "start", notebook: str = NOTEBOOK) -> None:
    """In ``notebook`` of the submission ``folder``: a cell that stops the worker reading, then a cell of
    2 MiB; after the first code cell (``at="start"``: every later cell is sent to a worker that no longer
    reads) or last (``at="end"``: after every grade cell)."""
    path = folder / notebook
    nb = json.loads(path.read_text())
    cells = [code_cell(STOPS_READING[stop]), code_cell(BIG_CELL)]
    first = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code")
    at_index = first + 1 if at == "start" else len(nb["cells"])
    nb["cells"][at_index:at_index] = cells
    path.write_text(json.dumps(nb))


def blocking_send_all(fd: int, data: bytes, deadline: float | None = None) -> None:
    """The grader's write before issue 35: wait until the socket takes a byte, then write all the rest of
    the frame in one blocking write, which waits until the peer has read it."""
    view = memoryview(data)
    while view:
        timeout = None if deadline is None else deadline - time.monotonic()
        if timeout is not None and timeout <= 0:
            raise rpc.Deadline()
        _, ready, _ = select.select([], [fd], [], timeout)
        if not ready:
            raise rpc.Deadline()
        try:
            sent = os.write(fd, view)
        except (BrokenPipeError, ConnectionResetError):
            raise rpc.PeerGone() from None
        view = view[sent:]


def grade_with_blocking_writes(job, *args, **kwargs):
    """``run.grader.grade`` in a grading process whose writes to its workers are the old blocking ones (a
    missing deadline): what the executors' watchdog must end. Its own process only (a pool process, a Dask
    worker)."""
    from autograder.run.grader import grade
    rpc.send_all = blocking_send_all
    return grade(job, *args, **kwargs)
