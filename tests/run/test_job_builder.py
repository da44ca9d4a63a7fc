"""One job builder (``run.job.student_job``): ``grade``, ``check``, ``watch`` and nbgrader's door grade the same
job of the same submission, and the door's class-level work (the copy-detection snapshot) is done once per
``nbgrader autograde`` run, not per student. Each door's job is taken where it is handed to its executor."""
from __future__ import annotations

import subprocess
import sys
from contextlib import nullcontext
from dataclasses import fields

from nbgrader.converters import Autograde
from nbgrader.coursedir import CourseDirectory

import autograder.intake.integrity as integrity
import autograder.run.autograde as door
import autograder.run.batch as batch
import autograder.run.check as check
import autograder.run.grader as grader
from autograder.intake import intake_submission
from autograder.run.job import Graded, failed
from autograder.sandbox.limits import Limits
from autograder.watch.grading import inbound_job
from batch_helpers import make_class

A = "ch04_attention"
STUDENT = "correct-1"


def _caught(module, monkeypatch) -> list:
    """The jobs ``module`` hands to its executor (``drain``), graded by nothing."""
    jobs: list = []
    monkeypatch.setattr(module, "drain", lambda executor, todo, finish: jobs.extend(todo))
    return jobs


def _shape(job) -> dict:
    """A job's fields, its course as the folder and assignment it was read from (a view is read per door)."""
    shape = {f.name: getattr(job, f.name) for f in fields(job) if f.name != "view"}
    return {**shape, "course": (job.view.root, job.view.assignment)}


def test_every_door_builds_the_same_job(tmp_path, monkeypatch):
    course = make_class(tmp_path, [STUDENT])
    folder = course / "submitted" / STUDENT / A
    [graded] = _batch_jobs(course, monkeypatch)
    [checked] = _check_jobs(folder, monkeypatch)
    watched = inbound_job(course, A, folder, STUDENT, False, "entry-1")
    [autograded] = _door_jobs(course, monkeypatch)
    want = {"student": STUDENT, "folder": folder, "limits": Limits(), "autograded": None, "visible": False,
            "course": (course.resolve(), A)}
    for job in (graded, checked, watched):
        assert {k: v for k, v in _shape(job).items() if k in want} == want
    # nbgrader's door writes its autograded notebooks in a folder of its own (nbgrader writes the student's),
    # from which it takes those of a renamed notebook: the one field that differs, and only there.
    assert {k: v for k, v in _shape(autograded).items() if k in want and k != "autograded"} == \
        {k: v for k, v in want.items() if k != "autograded"}
    assert autograded.autograded.name == "autograded" and autograded.autograded.parent.name.startswith("autograder-door-")
    assert graded.snapshot and autograded.snapshot and checked.snapshot is None     # a run's token: the class
    assert watched.key == "entry-1" and graded.key == checked.key == autograded.key == ""   # read once per run


def _batch_jobs(course, monkeypatch) -> list:
    jobs = _caught(batch, monkeypatch)
    batch.grade_batch(course=course, outputs=False, progress=False, workers=1)
    return jobs


def _check_jobs(folder, monkeypatch) -> list:
    jobs = _caught(check, monkeypatch)
    try:
        check.check_submission(folder)
    except IndexError:                       # no record came back: nothing graded it
        pass
    return jobs


def _door_jobs(course, monkeypatch) -> list:
    jobs = _caught(door, monkeypatch)
    monkeypatch.setattr(door, "_GRADED", {})
    monkeypatch.setattr(door.SERVER, "held", lambda idle: nullcontext(None))
    try:
        door.graded_submission(course, A, STUDENT, snapshot=door.run_snapshot(door.SandboxedExecute(
            parent=Autograde(coursedir=CourseDirectory(root=str(course))))))
    except IndexError:
        pass
    return jobs


def test_one_nbgrader_autograde_run_reads_the_class_once(tmp_path, monkeypatch):
    """Copy detection reads every classmate's submission: once per run of ``nbgrader autograde`` (each notebook
    of each student has a step of its own, all under the run's converter), not once per student; a second run
    (formgrader's Autograde button pressed again) reads the class as it is then."""
    students = [STUDENT, "no-scaling", "correct-einsum"]
    course = make_class(tmp_path, students)
    reads: list = []
    real = integrity.read_class
    monkeypatch.setattr(integrity, "read_class", lambda *key: reads.append(key) or real(*key))

    def grade(job, *args, **options):                 # intake as grading does it (copy detection), no worker
        intake_submission(job.folder, job.view, job.student, job.snapshot)
        return Graded(failed(job, "stand-in"))
    monkeypatch.setattr(grader, "grade", grade)
    monkeypatch.setattr(door, "_GRADED", {})
    monkeypatch.setattr(door.SERVER, "held", lambda idle: nullcontext(None))
    for run in (Autograde(coursedir=CourseDirectory(root=str(course))),
                Autograde(coursedir=CourseDirectory(root=str(course)))):
        for student in students:
            step = door.SandboxedExecute(parent=run)            # nbgrader makes one per notebook
            door.graded_submission(course, A, student, snapshot=door.run_snapshot(step))
    assert len(reads) == 2                                       # one per run (was one per student: 6)
    assert door.run_snapshot(door.SandboxedExecute()) is None   # no run: the class is read for the submission


def test_the_door_builds_its_job_without_the_batch_module():
    """nbgrader imports the door for every autograde: it needs the job module, not the batch's (its gradebook
    writer, Dask, the outputs)."""
    code = "import sys, autograder.run.autograde; print('autograder.run.batch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"
