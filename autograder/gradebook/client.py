"""Scores into nbgrader's gradebook through nbgrader's own API (formgrader and `nbgrader export` agree).

nbgrader takes seconds to import and to open a database, so the writer runs
as a separate process started when the batch starts: it loads nbgrader and
records the assignment's structure (notebooks, grade, solution and locked
cells, as nbgrader's SaveCells does) while the submissions are graded, then
reads the scores from its stdin. Each graded cell gets the rubric's points as
its auto score; the grade cells of a notebook that needs a person (its damage,
or the whole submission's) are marked for manual grading, and the reason is the
auto comment of that notebook's answer cells, where formgrader shows it.

The writer process itself is ``autograder.gradebook.writer``. It dies
with the process that started it, holds the run's output-folder lock (when
given one) and gets no other descriptor of the grader's.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

from ..course.nbgrader_cli import tool_env
from ..course.settings import Course
from ..records import OutputError, Record
from .messages import Answer, Scores
from .runlock import RunLocks

FAILED = "gradebook writer: "      # how the writer starts the one line that says why it failed

def review_flags(record: Record) -> dict[str, list[str]]:
    """notebook -> why its grade cells need a person, for the notebooks that do."""
    notebooks = dict.fromkeys(c.notebook for c in record.cells.values())
    return {nb: reasons for nb in notebooks if (reasons := record.review_reasons(nb))}


class GradebookWriter:
    """The writer process; ``finish(records)`` sends the scores and waits for it."""

    def __init__(self, db_url: str, course: Course, assignment: str, locks: RunLocks | None = None):
        self.db_url = db_url
        args = [sys.executable, "-m", "autograder.gradebook.writer", db_url, str(course.root), assignment,
                "--parent", str(os.getpid())]
        held = locks.held() if locks is not None else []
        for lock in held:
            args += ["--lock-fd", str(lock.fd), "--lock", str(lock.path)]
        if locks is not None and locks.server_backend:
            args += ["--lock-backend", str(locks.server_backend)]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     pass_fds=[lock.fd for lock in held], env=tool_env(), text=True)
        self.sent: set[str] = set()

    def fds(self) -> list[int]:
        """The grader's ends of the writer's pipes: a process forked later must close them, or the
        writer never sees the end of its input."""
        return [f.fileno() for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr) if f and not f.closed]

    def send(self, record: Record, submitted: str = "", changed: bool = False) -> None:
        """One student's scores, as soon as the record is written: the writer records them while the rest
        of the class is graded (``finish`` sends the others). A writer that died is reported by ``finish``.
        ``changed``: the record graded other work than the record before it (``Scores.changed``)."""
        if record.student_id in self.sent:
            return
        try:
            self.proc.stdin.write(json.dumps(_scores(record, submitted, changed=changed).to_dict()) + "\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):
            return
        self.sent.add(record.student_id)

    def finish(self, records: list[Record], submitted: dict[str, str] | None = None,
               fresh=None) -> dict[str, Answer]:
        """Send the scores not sent yet (and each submission's time, nbgrader's format; ``fresh``: the
        students this run graded, default all); return, per student, how late nbgrader's gradebook says
        the work was, each notebook's late penalty and what a person graded there (``scores.manual_work``)."""
        submitted = submitted or {}
        rest = [_scores(r, submitted.get(r.student_id, ""), fresh is None or r.student_id in fresh).to_dict()
                for r in records if r.student_id not in self.sent]
        try:
            out, err = self.proc.communicate(json.dumps(rest) if rest else None, timeout=600)
        except (OSError, ValueError):                 # the writer died while the class was graded
            out, err = "", self.proc.stderr.read() if self.proc.stderr else ""
            self.proc.wait()
        if self.proc.returncode != 0:
            raise OutputError(_why(err))
        try:
            return {str(student): Answer.from_dict(answer) for student, answer in json.loads(out).items()}
        except (ValueError, TypeError, KeyError, AttributeError):
            raise OutputError(f"the gradebook writer answered {out[-200:]!r}, not the lateness of each "
                              "submission") from None

    def abandon(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _scores(record: Record, submitted: str, fresh: bool = True, changed: bool = False) -> Scores:
    """What the writer records for one student; ``fresh``: graded by this run (only then may a cell a
    person cleared be flagged again); ``changed``: the work differs from what the last record graded."""
    return Scores(record.student_id, {g: c.earned for g, c in record.auto_cells.items()},
                  {nb: tuple(why) for nb, why in review_flags(record).items()}, submitted, fresh, changed)


def _why(err: str) -> str:
    """The writer's own line saying why it failed, else the last line it printed."""
    lines = [line for line in err.splitlines() if line.strip()]
    own = [line[len(FAILED):] for line in lines if line.startswith(FAILED)]
    return own[-1] if own else f"could not update the gradebook: {lines[-1][-800:] if lines else 'no message'}"
