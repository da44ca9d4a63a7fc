"""What to grade, as one frozen value, and what grading gives back: a ``Job`` in, a ``Graded`` out.

Every door (the batch, ``watch``, ``check``, nbgrader's autograde step) builds its jobs with ``student_job`` and drains an
executor (``run.executors``) that runs ``run.grader.grade`` on each, wherever it runs. The texts of a
submission that could not be graded live here, once, for every door and every executor.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..course.notebooks import CourseError
from ..course.view import CourseView
from ..inert import shown
from ..records import Finding, Record, not_graded
from ..sandbox.limits import Limits


@dataclass(frozen=True)
class Job:
    """One submission of one student, with how to grade it and what to write besides the record."""
    view: CourseView                  # the course as the door read it (sent to another process as its folder)
    student: str
    folder: Path                      # the submission: a folder of notebooks, or one notebook
    limits: Limits = field(default_factory=Limits)
    autograded: Path | None = None    # write nbgrader's autograded notebooks here too
    snapshot: str | None = None       # the batch's token for copy detection (``intake_submission``)
    visible: bool = False             # also run the visible-test cells (``watch`` with show = "visible")
    key: str = ""                     # the door's name for it (the student; ``watch``: the inbound entry)

    @property
    def assignment(self) -> str:
        return self.view.assignment

    @property
    def name(self) -> str:
        return self.key or self.student


def student_job(view: CourseView, student: str, folder: Path | None = None, *,
                limits: Limits | dict[str, Any] | None = None, autograded: bool | Path = False,
                snapshot: str | None = None, visible: bool = False, key: str = "") -> Job:
    """The one builder of a job, for every door: ``student``'s submission in ``folder`` (by default
    ``submitted/<student>/<assignment>`` of the course), graded within ``limits`` (a Limits, or the settings
    that make one). ``autograded``: nbgrader's autograded notebooks are written too, where ``nbgrader
    autograde`` leaves them (True) or in the folder given; ``snapshot``: a run's token, under which copy
    detection reads the class once (``intake.integrity.class_index``); ``visible`` and ``key``: ``watch``'s."""
    written = view.root / "autograded" / student / view.assignment if autograded is True else autograded or None
    folder = Path(folder) if folder is not None else view.root / "submitted" / student / view.assignment
    return Job(view, student, folder, limits=Limits(**limits) if isinstance(limits, dict) else limits or Limits(),
               autograded=Path(written) if written else None, snapshot=snapshot, visible=visible, key=key)


@dataclass(frozen=True)
class VisibleResult:
    """One visible-test cell of a notebook, as ``run.visible`` ran it."""
    grade_id: str
    passed: bool | None              # None: the cell never ran (the notebook stopped before it)
    message: str = ""


@dataclass(frozen=True)
class Graded:
    """The record of a job, and its visible tests' results (notebook -> [VisibleResult]) when asked."""
    record: Record
    visible: dict[str, list[VisibleResult]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"record": self.record.to_dict(),
                "visible": {nb: [vars(r) for r in results] for nb, results in self.visible.items()}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Graded:
        return cls(Record.from_dict(data["record"]),
                   {nb: [VisibleResult(**r) for r in results] for nb, results in data.get("visible", {}).items()})


# --- the texts of a submission that could not be graded (every door, every executor) ---------------

def grader_failed(exc: BaseException) -> str:
    return (f"The grader failed on this submission ({type(exc).__name__}: {exc}); an instructor must grade it "
            "by hand.")


def not_a_folder_text(job: Job, odd: str) -> str:
    return (f"submitted/{shown(job.student)[1:-1]}/{job.assignment} is {odd}, not a folder: nothing could be "
            "graded; ask the student to resubmit.")


def died_text(why: str) -> str:
    """A submission whose grading process (a local one or a Dask worker) died twice, the second time with
    nothing else of the run in it (``run.blame``)."""
    return (f"A grading process died twice on this submission, graded alone the second time ({why}); the other "
            "submissions were graded normally. An instructor must grade it by hand.")


def failed(job: Job, message: str, detail: str = "") -> Record:
    """The record of a job that could not be graded: every check at 0 with ``message``, for review, in the
    course's points."""
    from ..grading.fingerprint import fingerprint_of      # (the rubric loads numpy: only when a record is made)
    return failed_record(job.student, message, detail, assignment=job.assignment,
                         fingerprint=fingerprint_of(job.view.grade_cells), submission=folder_digest(job.folder, job.view),
                         cell_points=job.view.cell_points)


def failed_record(student_id: str, message: str, detail: str = "", *, assignment: str = "",
                  fingerprint: str = "", submission: str = "", cell_points: dict[str, float] | None = None) -> Record:
    """Every check of the rubric at 0 with ``message``, marked for review; with ``cell_points`` (the
    course's, ``CourseView.cell_points``) the checks share each cell's points (``rubric.scaled``)."""
    from ..grading.rubric import RUBRIC, scaled           # (numpy: only when a record is made)
    checks = [not_graded(g, i, message) for g, items in RUBRIC.items() for i in items]
    return Record(student_id, tuple(scaled(checks, cell_points) if cell_points else checks), assignment=assignment,
                  needs_review=True, findings=(Finding(message),), grader_error=detail,
                  fingerprint=fingerprint, submission=submission)


# --- "the same submission": its content digest, as a record carries it -----------------------------

def current_submission(view: CourseView, student: str) -> str:
    """The digest of ``submitted/<student>/<assignment>`` as it is now, as a record carries it
    (``intake.digest``): the one identity of "the same submission" for --resume and the nbgrader door."""
    return folder_digest(view.root / "submitted" / student / view.assignment, view)


def folder_digest(folder: str | Path, view: CourseView) -> str:
    """The digest of the submission in ``folder`` (any folder: ``watch`` grades inbound's) as intake of the
    course's notebooks reads it, as a record carries it."""
    from ..intake.digest import submission_digest           # (intake loads numpy; the job module alone does not)
    from ..intake.expected import notebooks_of  # (intake: numpy)
    try:
        names = notebooks_of(view).names
    except CourseError:                                    # no notebooks: the digest then reads none
        names = ()
    return submission_digest(Path(folder), names, view.assignment)
