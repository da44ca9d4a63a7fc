"""The rubric's view of one sandboxed notebook: ``student.get(name)`` returns a proxy callable.

Each notebook of a submission runs in its own worker, as ``nbgrader autograde``
runs each notebook in its own kernel, and runs its cells in order up to each
grade cell before that cell's checks call it (``run_to``). The proxy sends the inputs to the
worker and rebuilds the returned value from checked wire data; a crash or an
overrun becomes a failed check with a clear message, and the next call gets a
fresh worker while the spawn budget lasts.
"""
from __future__ import annotations

import threading
import time

from ..assignment import NOTEBOOKS
from ..intake import CodeCell
from ..sandbox.forkclient import ForkServer
from ..sandbox.handle import WorkerDied, WorkerHandle, cell_bytes, whole_seconds
from ..sandbox.limits import Limits, Received
from ..sandbox.rpc import MAX_PAYLOAD
from ..grading.asking import Reply, reply_of
from ..grading.student import StudentError, StudentRaised, missing_error, note_environment
from ..sandbox.worker import LATE_AT_MOST

LATE = ("TimeoutError", "NotAsked")          # what the worker says of a call past its time (and those not asked)
LATE_SAID = "did not return within"


class SandboxedStudent:
    """One notebook's code cells in a sandboxed worker. ``deadline`` (time.monotonic) is shared by all
    the notebooks of a submission; by default it is ``limits.total_seconds`` from now. Once ``stop`` is
    set no worker starts and no call is made (see ``abort``).

    The cells run in order, up to a position (``run_to``), as nbgrader's kernel reaches a grade cell: the
    rubric's calls then see the functions as the notebook defines them there. A fresh worker (after a
    crash) runs the cells again up to the current position."""

    def __init__(self, server: ForkServer, cells: list[CodeCell], names, limits: Limits,
                 notebook: str | None = None, deadline: float | None = None,
                 stop: threading.Event | None = None, start: bool = True):
        """``start``: run all the cells now; otherwise nothing runs before ``run_to``."""
        self.server, self.cells, self.names, self.limits = server, cells, list(names), limits
        self.notebook = notebook
        self.unread = False                  # the notebook was not read (missing, a link, damaged): nothing to define
        self.deadline = deadline if deadline is not None else time.monotonic() + limits.total_seconds
        self.skip: set[int] = set()
        self.events: list[str] = []          # what went wrong, for the record (needs review)
        self.notes: list[str] = []           # the student's own errors (shown in feedback)
        self.noted: set[int] = set()         # cells whose error is in notes (each once, however often run)
        self.outputs: list[str] = []
        self.status: dict = {}
        self.spawns = 0
        self.upto = 0                        # the notebook's position: how many of ``cells`` have been reached
        self.ran = 0                         # how many of them the current worker has run
        self.worker: WorkerHandle | None = None
        self.stop = stop or threading.Event()
        self.defined: set[str] = set()
        self.rounds = 0                      # round trips of the rubric's questions (``ask``)
        self.received = Received(limits.received_bytes // len(NOTEBOOKS))   # this notebook's share, all its workers
        if start:
            self.run_to(None)

    def run_to(self, index: int | None, restart: bool = True) -> None:
        """Run the cells that stand before notebook cell ``index`` (all of them for None), continuing in
        the worker that ran the earlier ones; the position never moves back. With ``restart=False`` a
        worker that a call ended is not replaced (a cell that stops the worker still is)."""
        reached = len(self.cells) if index is None else sum(1 for c in self.cells if c.index < index)
        self.upto = max(self.upto, reached)
        if self.worker is not None:
            self._advance()
        elif not restart and self.spawns:
            return
        if self.worker is None:
            self._start()

    def abort(self) -> None:
        """From another thread: end this notebook's grading now. The worker is SIGKILLed; the thread
        using it sees it die, cleans it up, and starts no other (``stop`` must be set first)."""
        worker = self.worker
        if worker is not None:
            worker.kill_now()                 # never by a bare pid: this worker may have ended long ago

    # --- life cycle ------------------------------------------------------------------------
    def _remaining(self) -> float:
        return -1.0 if self.stop.is_set() else self.deadline - time.monotonic()

    def _start(self) -> None:
        if not self.cells:                   # a missing or empty notebook: nothing to run, nothing defined
            return
        while self.worker is None and self.spawns < self.limits.spawns and self._remaining() > 0:
            self.spawns += 1
            try:
                worker = self.server.worker(self.limits)
            except (RuntimeError, WorkerDied) as exc:
                self.events.append(f"The sandbox could not start a worker ({exc}).")
                return
            self.status = worker.status
            self.worker, self.ran = worker, 0
            self.defined = set()
            self._advance()

    def _advance(self) -> None:
        """Run the current worker's cells up to the position; if one stops it, it is skipped from then on,
        the worker is cleaned up and ``self.worker`` is None (the caller starts the next)."""
        worker, before, defined = self.worker, self.ran, None
        while self.ran < self.upto:
            i, cell = self.ran, self.cells[self.ran]
            self.ran += 1
            if i in self.skip:
                continue
            size = len(cell_bytes(cell.source))
            if size > MAX_PAYLOAD:
                self.skip.add(i)
                self.events.append(f"Cell {cell.index} of {cell.notebook}.ipynb is {size >> 20} MiB of code; "
                                   f"cells over {MAX_PAYLOAD >> 20} MiB are not run, so it was skipped.")
                continue
            seconds = min(self.limits.cell_seconds, max(self._remaining(), 0.001))
            try:
                reply = worker.run_cell(cell.source, seconds, self.names)
            except WorkerDied as exc:
                self.skip.add(i)
                self.events.append(f"Cell {cell.index} of {cell.notebook}.ipynb stopped the worker ({exc}); "
                                   "it was skipped and the other cells were run again.")
                self._collect(worker, alive=False)
                self.server.retire(worker)
                self.worker, self.defined = None, set()
                return
            defined = reply.get("defined")          # after this cell: what the rubric may call
            if not reply.get("ok") and i not in self.noted:
                self.noted.add(i)
                err = reply.get("error") or {}
                self.notes.append(f"Cell {cell.index} of {cell.notebook}.ipynb raised "
                                  f"{str(err.get('type'))[:80]}: {str(err.get('message'))[:300]}")
        if defined is not None:              # the last cell run says what the notebook defines now
            self.defined = set(defined)
        elif self.ran > before:              # cells were only skipped, or no reply said: ask
            self.defined = self._defined(worker)

    def _defined(self, worker: WorkerHandle) -> set[str]:
        try:
            reply, _ = worker.request({"op": "functions", "names": self.names}, 10.0)
        except WorkerDied:
            return set()
        return {n for n in reply.get("defined", []) if n in self.names}

    def _collect(self, worker: WorkerHandle, alive: bool) -> None:
        text = ""
        if alive:
            try:
                reply, _ = worker.request({"op": "output"}, 5.0)
                text = f"{reply.get('stdout', '')}{reply.get('stderr', '')}"
            except WorkerDied:
                pass
        text = str(text)[: self.limits.output_bytes] + worker.fd_output(self.limits.output_bytes // 4)
        if text.strip():
            self.outputs.append(text)

    def close(self) -> None:
        if self.worker is not None:
            self._collect(self.worker, alive=True)
            self.server.retire(self.worker)
            self.worker = None

    # --- the rubric's interface ------------------------------------------------------------
    def get(self, name: str):
        if name not in self.defined:
            return None
        return lambda *args, **kwargs: self.call(name, args, kwargs)

    def call(self, name: str, args, kwargs):
        """One call, through the same round trip as many; failures are raised for the rubric."""
        outcome = self._calls(name, [(args, kwargs)])[0]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def call_many(self, name: str, arg_list: list[tuple]) -> list:
        """name(*args) for each args in one round trip: values, or StudentError/StudentRaised per call."""
        return self._calls(name, [(args, {}) for args in arg_list])

    def ask(self, name: str, questions: list) -> list:
        """The replies to a batch of questions (``grading.asking.Question``) of ``name`` in one round trip: each
        call may run ``call_seconds`` in the worker and fails alone past that (the worker then lives on, and the
        submission is flagged for a person: a time limit may be this machine's, not the student's). A function
        the notebook does not define (or a notebook that never reached the grader) is said so, nothing asked."""
        missing = missing_error(self, name, self.get(name))
        if missing is not None:
            return [Reply(error=missing) for _ in questions]
        calls = [(q.args, dict(q.kwargs), {"echo": q.echo, "hold": q.hold, **({} if q.into is None else {"into": q.into})})
                 for q in questions]
        outcomes = self._calls(name, calls, each=self.limits.call_seconds, raw=True)
        replies = [reply_of(name, self._answer(name, o, q.echo), self.notebook, q.echo)
                   for q, o in zip(questions, outcomes)]
        for reply in replies:
            note_environment(self, name, reply.error)          # a package missing where student code runs
        if any(r.error is not None and r.error.raised in LATE and LATE_SAID in str(r.error) for r in replies):
            self.events.append(f"`{name}` ran past its time limit ({self.limits.call_seconds:g} s) on some of the "
                               "grader's questions; they failed, the others were graded.")
        return replies

    def call_echo_many(self, name: str, arg_list: list[tuple]) -> list[tuple]:
        """name(*args) for each args in one round trip, each with the arguments as they are after the call
        (None when they did not come back: a refused or unreadable echo says nothing about them):
        (value or exception, args or None) per call."""
        out = []
        for outcome in self._calls(name, [(args, {}) for args in arg_list], echo=True):
            if isinstance(outcome, Exception):
                out.append((outcome, None))
                continue
            value, after = outcome
            out.append((self._outcome(name, value), after[1] if after[0] == "ok" and isinstance(after[1], tuple)
                        else None))
        return out

    def _answer(self, name: str, outcome, echoed: bool):
        """A call's outcome from the worker as a value, StudentRaised or StudentError (an exception already is
        one); echoed, with the arguments after the call (None when they did not come back)."""
        if isinstance(outcome, Exception):
            return outcome
        if not echoed:
            return self._outcome(name, outcome)
        value, after = outcome
        return self._outcome(name, value), (after[1] if after[0] == "ok" and isinstance(after[1], tuple) else None)

    def _calls(self, name: str, calls: list[tuple], echo: bool = False, each: float | None = None,
               raw: bool = False) -> list:
        if self.worker is None:
            self._start()
        if self.worker is None or self._remaining() <= 0:
            return [StudentError(f"`{name}` could not be called: the grading time or restarts for this "
                                 "submission ran out (see the notes).")] * len(calls)
        bound, left = self._batch_seconds(len(calls), each), max(self._remaining(), 0.001)
        try:
            reply, outcomes = self.worker.call_many(name, calls, min(bound, left), echo=echo, received=self.received,
                                                    each=each)
        except WorkerDied as exc:
            self.events.append(f"Calling `{name}` stopped the worker ({exc}).")
            self._collect(self.worker, alive=False)
            self.server.retire(self.worker)
            self.worker = None
            said = self._overran(name, len(calls), bound, left) if exc.late else f"`{name}` did not return: {exc}."
            return [StudentError(said)] * len(calls)
        if not reply["ok"]:                           # e.g. the function removed itself from the notebook
            return [StudentError(f"`{name}` could not be called: {reply['error']['message'][:300]}")] * len(calls)
        return outcomes if echo or raw else [self._outcome(name, o) for o in outcomes]

    def _overran(self, name: str, count: int, bound: float, left: float) -> str:
        """What a student reads when the worker gave no answer in time: which limit it met (this submission's
        whole grading time, or the time its calls may take) in whole seconds, and what to do."""
        todo = "look for a loop that never ends or one that is far slower than it needs to be"
        if left < bound:
            return (f"`{name}` did not return before this submission's grading time ran out "
                    f"({whole_seconds(self.limits.total_seconds)} for the whole submission): {todo}.")
        asked = "one call" if count == 1 else f"{count} calls"
        return (f"`{name}` did not return: no answer within {whole_seconds(bound)} ({asked}, each may take "
                f"{whole_seconds(self.limits.call_seconds)}): {todo}.")

    def _batch_seconds(self, count: int, each: float | None) -> float:
        """How long a round trip of ``count`` calls may take: ``call_seconds``, or with a limit per call in the
        worker, enough for that many calls past it (``worker.LATE_AT_MOST``) and a little for each of the rest."""
        if each is None:
            return self.limits.call_seconds
        return self.limits.call_seconds * (LATE_AT_MOST + 1) + 0.05 * count

    @staticmethod
    def _outcome(name: str, outcome: tuple):
        if outcome[0] == "ok":
            return outcome[1]
        if outcome[0] == "raised":
            return StudentRaised(*outcome[1:5], late=len(outcome) > 5 and outcome[5] is True)
        return StudentError(f"`{name}` returned a value the grader does not accept: {outcome[2]}")
