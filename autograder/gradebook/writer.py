"""The gradebook writer process (see ``autograder.gradebook.client``): nbgrader's API, nothing else.

    python -m autograder.gradebook.writer DB_URL COURSE ASSIGNMENT \
        [--parent PID] [--lock-fd FD --lock PATH]... < scores.json > lateness.json

It records each submission's time and scores (``scores``), assigns late penalties as nbgrader does
(``latepenalties``), through nbgrader's API loaded cheaply (``nbgrader_api``), and prints, per student, how late the work was and each notebook's
penalty, which the other outputs then show.

With ``--parent`` it dies with the grading run that started it. With
``--lock-fd`` it holds the run's locks (output folder, gradebook; see
``runlock``) and writes only while each lock file is still the one it holds:
an orphan never writes after a newer run started.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import queue
import sys
import threading
import warnings
from pathlib import Path

from ..course.settings import load_course
from ..lifecycle import die_with_parent, ignore_terminal_interrupt
from .client import FAILED
from .latepenalties import LatePenalties
from .messages import Scores
from .nbgrader_api import nbgrader_api, stamp_new
from .pglock import held_by
from .runlock import belongs_to_run
from .scores import Gone, _record_structure, write_scores
from .transactions import GradebookGone, is_gone, short_transaction
from .url import shown_url

GONE = 3        # exit status: the run this writer belonged to is over; nothing was written


class Incoming:
    """The run's scores, read from stdin by a thread from the writer's start, so the run never waits to
    send one (a pipe holds 64 KiB) while nbgrader loads: one JSON object per line (one student) or a
    JSON list of them, sent as each record is written (``messages.Scores``); the end of stdin ends the class."""

    def __init__(self, stream):
        self.received = False                # anything at all, even an empty list
        self.lines: queue.Queue = queue.Queue()
        self.pending: collections.deque = collections.deque()      # scores of a line not taken yet
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream) -> None:
        try:
            for line in stream:
                self.lines.put(line)
        finally:
            self.lines.put(None)

    def __iter__(self):
        while (line := self.lines.get()) is not None:
            if not line.strip():
                continue
            self.received = True
            value = json.loads(line)
            self.pending.extend(map(Scores.from_dict, value if isinstance(value, list) else [value]))
            while self.pending:
                yield self.pending.popleft()

    def batches(self, size: int):
        """Lists of at most ``size`` scores: those that have come, without waiting for more."""
        batch = []
        for score in self:
            batch.append(score)
            if len(batch) >= size or (not self.pending and self.lines.empty()):
                yield batch
                batch = []
        if batch:
            yield batch


class RunCheck:
    """Does this writer still belong to the live run that started it?"""

    def __init__(self, parent: int | None, lock_fds: list[int], locks: list[str], backend: int | None = None):
        if len(lock_fds) != len(locks):
            raise SystemExit("give one --lock PATH for each --lock-fd")
        self.parent, self.locks, self.backend = parent, list(zip(lock_fds, map(Path, locks))), backend

    def ours(self, gb=None) -> bool:
        """With ``gb``, a PostgreSQL gradebook's advisory lock is checked too, in the transaction about to commit."""
        if self.parent and os.getppid() != self.parent:
            return False
        if gb is not None and self.backend and not held_by(gb.db, self.backend):
            return False
        return all(belongs_to_run(fd, path) for fd, path in self.locks)


def _parse(argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m autograder.gradebook.writer")
    for name in ("db_url", "course", "assignment"):
        parser.add_argument(name)
    parser.add_argument("--parent", type=int, default=None, help="die with this process (the run's)")
    parser.add_argument("--lock-fd", type=int, action="append", default=[],
                        help="inherited descriptor of one of the run's locks")
    parser.add_argument("--lock", action="append", default=[], help="path of that lock file")
    parser.add_argument("--lock-backend", type=int, default=None,
                        help="the server process holding the run's advisory lock (a PostgreSQL gradebook)")
    return parser.parse_args(argv)


def _gone(what: str) -> int:
    print(f"the grading run that started this gradebook writer is over ({what}); nothing written",
          file=sys.stderr)
    return GONE


def main(argv=None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    try:
        return _main(args)
    except Exception as exc:  # noqa: BLE001 - any failure is one line for the instructor, not a traceback
        print(FAILED + failure(exc, args.db_url), file=sys.stderr)
        return 1


def failure(exc: Exception, db_url: str) -> str:
    """Why the gradebook could not be written, and what to do, in one line."""
    where = shown_url(db_url)
    text = " ".join(str(exc).split())
    if isinstance(exc, GradebookGone):
        return text[:800]
    if is_gone(exc):
        return (f"cannot reach the gradebook database {where} ({' '.join(str(getattr(exc, 'orig', exc)).split())[:200]}): "
                "start it (or fix the URL), then run grade --resume, which writes the scores from the records "
                "without grading again")
    if "database is locked" in text:
        return (f"{where} is locked by another program writing to it (formgrader saving a grade, an nbgrader "
                "command, a sqlite3 shell): let it finish or close it, then run grade --resume, which writes "
                "the scores without grading again")
    if "readonly database" in text or "read-only" in text:
        return (f"{where} cannot be written (it is read-only, or ?mode=ro asks for that): give a gradebook "
                "you can write with --gradebook, then run grade --resume")
    if type(exc).__name__ == "OperationalError":
        return (f"the database {where} refused the scores ({text[:300]}); fix the database or give another "
                "with --gradebook, then run grade --resume")
    if isinstance(exc, RuntimeError):
        return text[:600]
    return f"{where}: {type(exc).__name__}: {text[:300]}"


def _main(args) -> int:
    if args.parent:
        die_with_parent(args.parent)
    ignore_terminal_interrupt()
    run = RunCheck(args.parent, args.lock_fd, args.lock, args.lock_backend)
    if not run.ours():
        return _gone("before start")
    incoming = Incoming(sys.stdin)                       # scores may come while nbgrader loads
    warnings.filterwarnings("ignore", message=".*not in session.*")     # nbgrader's own add_submission
    # jsonschema (via nbformat) builds an IRI grammar at import when rfc3987-syntax is installed:
    # a second of start-up for a format check this process never uses. Mark it absent.
    sys.modules.setdefault("rfc3987_syntax", None)
    Gradebook = nbgrader_api().Gradebook
    stamp_new(args.db_url)
    course = load_course(args.course)
    with Gradebook(args.db_url, course.course_id) as gb:
        if not run.ours():
            return _gone("while loading nbgrader")
        short_transaction(gb, lambda: _record_structure(gb, Path(args.course), args.assignment))
        try:
            with contextlib.redirect_stdout(sys.stderr):                        # stdout: only the answer
                own = course.root if course.db_url == args.db_url else None     # grade wrote its autograded/
                lateness = write_scores(gb, args.assignment, incoming, LatePenalties(course), lambda: run.ours(gb), own)
        except Gone as gone:
            return _gone(str(gone))
    print(json.dumps({student: answer.to_dict() for student, answer in lateness.items()}))
    return 0


if __name__ == "__main__":
    from ..lifecycle import exit_now
    exit_now(main())
