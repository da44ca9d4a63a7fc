"""The service: notice each submission in inbound, grade it, publish its pages, journal each step.

One loop in the main thread: list inbound, look at each entry not yet done (``inbound.examine``),
handle the complete ones in the order they arrived, then sleep until inotify (or the poll) says
inbound changed, or sooner while a submission is still being written or graded. A stop signal
(SIGINT, SIGTERM, SIGHUP) ends it between two steps of the journal; the fork server and its
workers end with it, and the locks are released. No submission can stall the loop: every exchange with a
worker has a deadline, and a grading past its bound is ended by the executor's watchdog (``run.executors``:
the submission charged, its page published) while the loop waits for it.
"""
from __future__ import annotations

import json
import os
import sys
import time
from collections import defaultdict
from contextlib import ExitStack
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from ..course.settings import choose_assignment
from ..course.view import course_settings
from ..inert import one_line, shown
from ..intake.names import notebook_for
from ..lifecycle import Stop, critical, stop_on_signals
from ..records import name_digest
from ..gradebook.runlock import RunLock
from ..assignment import NOTEBOOKS
from .config import WatchSettings, watch_settings
from .duedate import DueDates, DueUnknown
from ..run.dask import SchedulerLost
from ..run.job import Graded
from .grading import inbound_job, watch_executor
from . import turns
from .inbound import SECRET, SETTLE_SECONDS, Problem, Waiting, examine, accounts_line, parse_name, receive
from ..journal.events import Event, Note, Published, Received, Started, Stopped
from ..journal.events import Graded as GradedEvent
from ..journal.log import Journal
from .limits import next_check
from .pages import MARK, closed_page, feedback_page, limit_page, unknown_notebook_page, when
from .publish import ensure_folder, page_file, publish, write_atomic
from .wake import Polling, waker
from ..intake.expected import CourseError, course_notebooks

IDLE_SECONDS = 1.0          # inbound is listed at least this often, whatever inotify says
PENDING_SECONDS = 0.05      # how often a submission still being written (or graded on Dask) is looked at
RETRY_SECONDS = 30.0        # after a page could not be written (a full disk, say)
DUE_RETRY_SECONDS = 5.0     # while the gradebook cannot be read for a due date (its server down)
LOCK = ".autograder-watch.lock"


def watch(*, course=".", assignment: str | None = None, scheduler: str | None = None, poll: float | None = None,
          say=None, warn=None, until=None) -> None:
    """Serve feedback on submit for ``course`` until a stop signal (raised as ``lifecycle.Stop``); ``say``
    and ``warn`` take the progress lines and the notes (default: stdout and stderr, a line at a time, as
    journald or a log file wants them); ``until``: return once ``until()`` is true after a pass (tests)."""
    say = say or (lambda text: print(text, flush=True))
    warn = warn or (lambda text: print(text, file=sys.stderr, flush=True))
    settings = _settings(course, assignment)
    with ExitStack() as stack:
        stack.enter_context(stop_on_signals())
        grader = watch_executor(scheduler)         # first: its grading process holds none of the locks
        stack.callback(grader.close)
        for path, what in ((settings.state / LOCK, f"{settings.state}/ (feedback on submit)"),
                           (settings.feedback / LOCK, f"{settings.feedback}/ (feedback on submit)")):
            stack.enter_context(RunLock(path, what, kind="watch serving feedback on submit"))
        journal = Journal(settings.state)
        stack.callback(journal.close)
        wake = waker(settings.inbound, poll)
        stack.callback(lambda: wake.close())
        service = Service(settings, journal, grader, say, warn)
        stack.callback(service.due.close)
        say(one_line(f"watching {settings.inbound} for {settings.assignment} submissions ({wake.name}); pages go "
                     f"to {settings.feedback}; show {settings.show!r}, at most {settings.limit} per student"
                     f"{', also after the due date' if settings.after_due_date else ''}; journal {journal.path}; "
                     f"settings are read once: restart watch after changing {service.config.name}"))
        say(one_line(accounts_line()))
        while True:
            timeout = service.step()
            if until is not None and until():
                return
            wake.wait(timeout)
            if wake.failed is not None:
                warn(one_line(f"note: inotify stopped ({wake.failed}); polling {settings.inbound} every second"))
                wake.close()
                wake = Polling(1.0)


def _settings(course, assignment: str | None) -> WatchSettings:
    course = course_settings(course)
    settings = watch_settings(course, choose_assignment(course.root, assignment))
    if not settings.inbound.is_dir():
        raise ValueError(f"{settings.inbound} does not exist: the exchange holds no course "
                         f"{course.course_id!r} at {settings.root}; run `nbgrader release_assignment` first, "
                         "or check c.Exchange.root and c.CourseDirectory.course_id")
    ensure_folder(settings.feedback)
    (settings.state / "records").mkdir(parents=True, exist_ok=True)
    return settings


def _graded_notebooks(settings: WatchSettings) -> tuple[str, ...]:
    try:
        return course_notebooks(settings.course.root, settings.assignment).names
    except CourseError:
        return tuple(sorted(NOTEBOOKS))


class Service:
    def __init__(self, settings: WatchSettings, journal: Journal, grader, say, warn):
        self.s, self.journal, self.grader, self.say, self.warn = settings, journal, grader, say, warn
        self.due = DueDates(settings.course.db_url)
        self.pending: dict[str, tuple] = {}          # entry -> (signature, monotonic time it last changed)
        self.ignored: set[str] = set()               # other assignments' submissions
        self.retry: dict[str, float] = {}            # entry -> monotonic time to try again
        self.inflight: dict[str, tuple] = {}         # entry -> (name parts, Ready, started at)
        self.names = _graded_notebooks(settings)     # the notebooks grading takes: what "received" reads
        self.receipts: dict[str, object] = {}        # entry -> its first reading, until it is journaled
        self.ledger = turns.Ledger()                 # owner -> what the service read for it lately
        self.reader = turns.Reader(lambda name, found, budget: receive(settings.inbound, name, found, self.names,
                                                                       budget))
        self.started = time.time()                   # what arrived before: the backlog, graded uncharged
        self.backlog: dict[str, list[float]] = defaultdict(list)   # student -> backlog checks graded here
        self.config = settings.course.root / "nbgrader_config.py"
        self.config_seen = _signature(self.config)

    # --- one pass over inbound --------------------------------------------------------------
    def step(self) -> float:
        """Handle what is ready; the seconds until the next pass should at the latest happen."""
        self._config_changed()
        self._collect()
        try:
            fd = os.open(self.s.inbound, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            self.warn(one_line(f"error: {self.s.inbound} cannot be opened ({exc.strerror}); trying again"))
            return IDLE_SECONDS
        try:
            waiting = turns.queues(fd, self._candidates(sorted(os.listdir(fd))))
            owners = turns.order(waiting, self.ledger, time.time())
            chosen = {owner: self._choose(fd, waiting[owner]) for owner in owners}     # readings start here
        finally:
            os.close(fd)
        self.reader.wait(self.reader.started_now(), turns.READ_WAIT)    # not those of an earlier pass
        more = any(pick and not pick.entry for pick in chosen.values())             # notes made: look again
        for owner, pick in chosen.items():       # a turn each, in order: a flood waits its own
            if pick and pick.entry and (found := self._received(pick.entry.name, pick.found, owner)):
                self._waiting_for_due(pick.entry.name, self._handle, pick.entry.name, pick.entry.parts, found)
                more = True
        self._collect()
        if more:
            return 0.0                       # more may have arrived while these were graded: look again now
        return PENDING_SECONDS if self.pending or self.grader.busy or self.reader.active else IDLE_SECONDS

    def _candidates(self, names: list[str]) -> list[tuple]:
        """(entry, name parts) of ``names`` not yet done, by their names alone; notes for names of no submission."""
        now, out = time.monotonic(), []
        listed = set(names)
        self.pending = {n: v for n, v in self.pending.items() if n in listed}      # a folder taken away
        for name in names:
            state = self.journal.state.entries.get(name)
            if (state and state.done) or name in self.ignored or name in self.inflight or self.retry.get(name, 0) > now:
                continue
            parts = parse_name(name)
            if isinstance(parts, str):
                self._note(name, parts)
            elif parts.assignment != self.s.assignment:
                self.ignored.add(name)
            else:
                out.append((name, parts))
        return out

    def _choose(self, fd: int, queue: list) -> turns.Choice | None:
        """One owner's submission this pass: its folders looked into, earliest first, at most ``turns.MAX_LOOKS``,
        until one is complete, whose reading starts (off the loop); Choice(None) after notes only; else None."""
        now, noted = time.monotonic(), False
        for entry in queue[:turns.MAX_LOOKS]:
            seen = self.pending.get(entry.name)
            found = examine(fd, entry.name, settled=bool(seen) and now - seen[1] >= SETTLE_SECONDS, names=self.names)
            if isinstance(found, Waiting):
                if not seen or seen[0] != found.signature:
                    self.pending[entry.name] = (found.signature, now)
                continue
            self.pending.pop(entry.name, None)
            if isinstance(found, Problem):
                self._note(entry.name, found.note)
                noted = True
                continue
            self._received(entry.name, found, entry.owner)          # starts its reading, unless read
            return turns.Choice(entry, found)
        return turns.Choice(None) if noted else None

    def _received(self, name: str, found, owner: str):
        """``found`` with what was read when it was first received: journaled once, read again never (a restart
        keeps the first reading: a later rewrite is not what counts). Read off the loop (``turns.Reader``; None
        until it is); the bytes read are the owner's."""
        state = self.journal.state.entries.get(name)
        if state is not None and state.received is not None:
            return replace(found, received=state.received.received, submission=state.received.submission)
        if name not in self.receipts:                  # read once, even while it waits for its turn
            got = self.reader.done(name)
            if got is None:
                self.reader.start(owner, name, found)  # unless this owner's reading is under way
                return None
            self.ledger.charge(owner, got[1], time.time())
            self.receipts[name] = got[0]
        first = self.receipts[name]
        return replace(found, received=first.received, submission=first.submission)

    # --- one submission ----------------------------------------------------------------------
    def _handle(self, name: str, parts, found) -> None:
        state = self._admit(name, parts, found)
        if state is None:
            return
        if state.graded:
            return self._publish_saved(name, parts, found, state.graded)
        if state.starts >= 2:
            return self._note(name, f"submission {shown(name)} stopped the service twice while it was graded; "
                              "it is not graded again here: grade it with `python -m autograder check`")
        if self._closed(name, parts, found) or self._over_limit(name, parts, found):
            return
        self._append(Started(name, at=time.time()))
        self.inflight[name] = (parts, found, time.time())
        try:
            self.grader.submit(inbound_job(self.s.course.root, self.s.assignment, self.s.inbound / name,
                                           parts.student, self.s.show == "visible", name))
            self._collect(wait=self.grader.serial)      # one at a time (local): publish before the next one
        except Stop:
            self._append(Stopped(name, at=time.time()))
            raise

    def _waiting_for_due(self, name: str, step, *args) -> None:
        """``step(*args)``; when it needs a due date the gradebook cannot give, the entry is tried again later."""
        try:
            step(*args)
        except DueUnknown:
            self.retry[name] = time.monotonic() + DUE_RETRY_SECONDS

    def _admit(self, name: str, parts, found):
        """The entry's journal state once its secret is its own (journaled as received); None after a note."""
        state = self.journal.state.entries.get(name)
        if state is None or state.received is None:
            self._append(Received(name, student=parts.student, assignment=parts.assignment, secret=found.digest,
                                  received=found.received, at=time.time(), submission=found.submission))
            state = self.journal.state.entries[name]
        elif state.received.secret != found.digest:
            self._note(name, f"submission {shown(name)}: its {SECRET} changed after it arrived; it was "
                       "not graded and no page was published")
            return None
        first = self.journal.state.secrets.get(found.digest)
        if first != name:
            self._note(name, f"submission {shown(name)} holds the same {SECRET} as {shown(first)}: its pages "
                       "would be that submission's, so it was not graded and no page was published (a copied "
                       "folder, or a student imitating another)")
            return None
        return state

    def _is_backlog(self, found) -> bool:
        """Received before this watch started (it waited for the service): not charged to the student."""
        return found.received < self.started

    def _over_limit(self, name: str, parts, found) -> bool:
        """Beyond the student's limit: a page saying when the next check is possible, no check. A backlog
        counts only against the backlog graded since the start (at most the limit each), never the days'."""
        backlog = self._is_backlog(found)
        used = (self.backlog[parts.student] if backlog else self.journal.state.checks.get(parts.student, [])) + [
            t for p, f, t in self.inflight.values() if p.student == parts.student and self._is_backlog(f) == backlog]
        nxt = next_check(used, self.s.limit, time.time())
        if nxt is None:
            return False
        made, due = time.time(), None if self.s.after_due_date else self._due(parts.student)
        closes = due is not None and nxt > due.replace(tzinfo=timezone.utc).timestamp()
        pages = {page_file(found.secret, nb): limit_page(parts.student, nb, made, nxt, self.s.limit,
                                                         due if closes else None) for nb in found.notebooks}
        then = f"no check before the due date {when(due)}" if closes else f"next check after {when(nxt)}"
        self._publish(name, parts, pages, "limit", f"over the limit ({self.s.limit}); {then}", next=nxt)
        return True

    def _due(self, student: str) -> datetime | None:
        """The student's due date (naive UTC, extension included), or None when none is set; ``DueUnknown``
        while the gradebook cannot be read (``duedate.DueDates.due_or_wait``)."""
        return self.due.due_or_wait(self.s.assignment, student, self.warn)

    def _late(self, student: str, found) -> datetime | None:
        """The due date ``found`` arrived after, or None."""
        due = self._due(student)
        arrived = datetime.fromtimestamp(found.received, timezone.utc).replace(tzinfo=None)
        return due if due is not None and arrived > due else None

    def _closed(self, name: str, parts, found) -> bool:
        """After the due date (with the student's extension): a page saying so, no check."""
        if self.s.after_due_date:
            return False
        due = self._late(parts.student, found)
        if due is None:
            return False
        made, text = time.time(), when(due)
        pages = {page_file(found.secret, nb): closed_page(parts.student, nb, made, text) for nb in found.notebooks}
        self._publish(name, parts, pages, "closed", f"after the due date {text}: not checked")
        return True

    def _collect(self, wait: bool = False) -> None:
        """Publish what the grader has done; with ``wait``, until it has nothing left in flight."""
        while True:
            try:
                done = self.grader.finished(wait=wait)
            except SchedulerLost as lost:        # the cluster's failure: those are graded again later
                for job in lost.jobs:
                    self.inflight.pop(job.key, None)
                    self.warn(one_line(f"error: grading {shown(job.key)} failed on the cluster ({lost}); it "
                                       "is tried again"))
                return
            for job, graded in done:
                self._graded(job.key, graded)
            if not (wait and self.grader.busy):
                return

    def _graded(self, name: str, graded: Graded) -> None:
        parts, found, started = self.inflight.pop(name)
        record_file = name_digest(name, 40) + ".json"
        try:
            write_atomic(self.s.state / "records" / record_file, json.dumps(graded.to_dict()).encode())
        except OSError as exc:                 # a full disk: not the submission's fault; graded again later
            self._append(Stopped(name, at=time.time()))
            self.retry[name] = time.monotonic() + RETRY_SECONDS
            self.warn(one_line(f"error: the record of {shown(name)} could not be saved in {self.s.state} "
                               f"({exc.strerror or exc}); trying again in {RETRY_SECONDS:g} s"))
            return
        rec = graded.record
        if found.submission and rec.submission != found.submission:
            self._note(name, f"submission {shown(name)}: its notebooks changed after the service received them "
                       f"({when(found.received)}); what was graded is not what was received, so no page was "
                       "published and no check was used (submit again with nbgrader)")
            return
        backlog = self._is_backlog(found)
        if backlog:
            self.backlog[parts.student].append(time.time())
        self._append(GradedEvent(name, student=parts.student, record=record_file, total=rec.total,
                                 max=rec.max_total, diagnoses=tuple(rec.diagnoses), review=rec.needs_review,
                                 seconds=round(time.time() - started, 3), at=time.time(),
                                 charged=False if backlog else None))
        self._waiting_for_due(name, self._publish_graded, name, parts, found, graded)

    def _publish_saved(self, name: str, parts, found, event: GradedEvent) -> None:
        path = self.s.state / "records" / event.record
        try:
            graded = Graded.from_dict(json.loads(path.read_text()))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return self._note(name, f"submission {shown(name)} was graded but its saved record {path} cannot be "
                              f"read ({type(exc).__name__}); grade it with `python -m autograder check`")
        self._publish_graded(name, parts, found, graded)

    def _publish_graded(self, name: str, parts, found, graded: Graded) -> None:
        rec, made, pages = graded.record, time.time(), {}
        late = self._late(parts.student, found) if self.s.after_due_date else None
        for stem in found.notebooks:
            notebook = notebook_for(f"{stem}.ipynb", tuple(NOTEBOOKS))
            pages[page_file(found.secret, stem)] = (
                feedback_page(rec, notebook, self.s.show, made, graded.visible.get(notebook, []), due=late)
                if notebook else unknown_notebook_page(parts.student, stem, made, due=late))
        used = len(self.journal.state.checks.get(parts.student, []))
        charged = (f"check {used} of {self.s.limit}" if not self._is_backlog(found) else
                   "received before watch started: not counted against the limit")
        diagnoses = f" ({', '.join(rec.diagnoses)})" if rec.diagnoses else ""
        self._publish(name, parts, pages, "feedback", f"graded {rec.total}/{rec.max_total}{diagnoses}"
                      f"{', needs review' if rec.needs_review else ''}; {charged}", show=self.s.show)

    def _publish(self, name: str, parts, pages: dict, kind: str, what: str, **extra) -> None:
        try:
            kept = publish(self.s.feedback, pages, MARK)
        except OSError as exc:
            self.retry[name] = time.monotonic() + RETRY_SECONDS
            self.warn(one_line(f"error: the pages of {shown(name)} could not be written to {self.s.feedback} "
                               f"({exc.strerror or exc}); trying again in {RETRY_SECONDS:g} s"))
            return
        self._append(Published(name, kind=kind, pages=len(pages) - len(kept), kept=len(kept), at=time.time(),
                               **extra))
        n = len(pages) - len(kept)
        kept_text = f" ({len(kept)} kept: release_feedback had already put the graded page there)" if kept else ""
        self.say(one_line(f"{when(time.time())} {shown(parts.student)}: {what}; {n} page{'s' * (n != 1)} "
                          f"published{kept_text}"))

    def _config_changed(self) -> None:
        """A note, once per change, that ``nbgrader_config.py`` changed: the settings stay those read at start."""
        seen = _signature(self.config)
        if seen == self.config_seen:
            return
        self.config_seen = seen
        self.warn(one_line(f"note: {self.config} changed; this watch keeps the settings it started with (show "
                           f"{self.s.show!r}, at most {self.s.limit}, after the due date "
                           f"{'on' if self.s.after_due_date else 'off'}): restart watch to use the new ones"))

    def _note(self, name: str, note: str) -> None:
        self._append(Note(name, note=note, at=time.time()))
        self.warn(one_line(f"note: {note}"))

    def _append(self, event: Event) -> None:
        with critical():                           # a stop signal waits until the line is whole
            self.journal.append(event)


def _signature(path: Path) -> tuple | None:
    """What changes when a file is edited or replaced (inode, size, modification time), None when absent."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns
