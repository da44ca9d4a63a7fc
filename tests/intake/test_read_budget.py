"""Every byte read outside the sandbox has a budget, counted on the bytes actually read.

The digest (for --resume, watch and the nbgrader door) and intake read only the notebooks grading
takes, each within intake's caps and all within one ``files.Budget`` of bytes and seconds: a sparse
notebook (holes that cost its maker no disk) is refused before its first byte, a folder of thousands of
huge or sparse files costs what its notebooks cost, a FIFO is never waited on, and a slow read stops
at the budget's time. Each costs the submitter a note, never a classmate's time.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from autograder.intake import files, take
from autograder.course.view import read_course
from autograder.intake.digest import submission_digest
from autograder.intake.submission import intake_submission
from autograder.assignment import NOTEBOOKS
from batch_helpers import make_class

A, NB = "ch04_attention", "ex1_attention"
NAMES = tuple(sorted(NOTEBOOKS))


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    return make_class(tmp_path_factory.mktemp("budget"), ["correct-1", "no-scaling"])


@pytest.fixture
def course(pristine, tmp_path):
    shutil.copytree(pristine, tmp_path / "course", symlinks=True)
    return tmp_path / "course"


def _folder(course: Path, student: str = "correct-1") -> Path:
    return course / "submitted" / student / A


def _sparse(path: Path, size: int) -> None:
    with open(path, "wb") as f:
        f.truncate(size)


@pytest.fixture
def bytes_read(monkeypatch):
    """The bytes ``os.read`` returns while the test runs (every read of a student's file goes through it)."""
    count = [0]
    real = os.read

    def counting(fd, n):
        data = real(fd, n)
        count[0] += len(data)
        return data
    monkeypatch.setattr(os, "read", counting)
    return count


def _notebook_bytes(folder: Path) -> int:
    return sum((folder / f"{n}.ipynb").stat().st_size for n in NAMES)


def test_the_digest_reads_only_the_graded_notebooks_whatever_else_the_folder_claims(course, bytes_read):
    folder = _folder(course)
    before = submission_digest(folder, NAMES, A)
    for i in range(2_000):                              # claims 500 GB, costs no disk
        _sparse(folder / f"junk{i:04d}.ipynb.bak", 256 << 20)
    bytes_read[0] = 0
    assert submission_digest(folder, NAMES, A) == before        # what is not graded is not the submission
    assert bytes_read[0] <= _notebook_bytes(folder) + 300        # the notebooks and timestamp.txt, no more
    (folder / f"{NB}.ipynb").write_text((folder / f"{NB}.ipynb").read_text().replace("softmax", "softmaX", 1))
    assert submission_digest(folder, NAMES, A) != before        # a change of what is graded is a new one


def test_intake_and_the_digest_agree_on_the_bytes_graded(course):
    folder = _folder(course)
    (folder / "notes.txt").write_text("not graded")
    intake = intake_submission(folder, read_course(course, A), "correct-1")
    assert intake.submission == submission_digest(folder, NAMES, A)
    one = folder / f"{NB}.ipynb"
    assert intake_submission(one, read_course(course, A), "correct-1").submission == submission_digest(one, NAMES, A)


def test_a_sparse_notebook_is_refused_before_its_first_byte(course, bytes_read):
    folder = _folder(course)
    nb = folder / f"{NB}.ipynb"
    text = nb.read_bytes()
    with open(nb, "r+b") as f:                             # the real notebook, then a 200 MB hole
        f.truncate(len(text) + (200 << 20))
    bytes_read[0] = 0
    intake = intake_submission(folder, read_course(course, A), "correct-1")
    assert bytes_read[0] < 2 << 20                     # its notebooks and the classmate's: not the hole
    [line] = [p for p in intake.problems if NB in p]
    assert "sparse file" in line and "was not read" in line
    assert NB not in intake.files and len(intake.files) == 3     # the other notebooks graded


def test_a_fifo_or_device_in_place_of_a_notebook_is_never_waited_on(course):
    folder = _folder(course)
    (folder / f"{NB}.ipynb").unlink()
    os.mkfifo(folder / f"{NB}.ipynb")
    os.mkfifo(folder / "timestamp.txt")
    os.symlink("/dev/zero", folder / "ex2_causal_mask.ipynb.tmp")
    first = submission_digest(folder, NAMES, A)                  # returns: nothing blocks
    intake = intake_submission(folder, read_course(course, A), "correct-1")
    assert any("named pipe (FIFO)" in p for p in intake.problems)
    assert intake.submission == first


def test_a_read_past_the_budgets_time_stops_with_a_note(course, monkeypatch):
    folder = _folder(course)
    nb = folder / f"{NB}.ipynb"
    nb.write_text(nb.read_text() + " " * (8 << 20))             # several chunks
    now = [0.0]

    def slow_clock():                                           # each read of a chunk takes 3 s
        now[0] += 3.0
        return now[0]
    monkeypatch.setattr(files.Budget, "clock", staticmethod(slow_clock))
    intake = intake_submission(folder, read_course(course, A), "correct-1")
    [line] = [p for p in intake.problems if NB in p]
    assert f"took over {files.READ_SECONDS:g} s" in line and NB not in intake.files


def test_a_submission_past_the_byte_budget_loses_only_what_it_did_not_get(course, monkeypatch):
    folder = _folder(course)
    monkeypatch.setattr(files, "READ_BYTES", _notebook_bytes(folder) - 1000)
    intake = intake_submission(folder, read_course(course, A), "correct-1")
    refused = [p for p in intake.problems if "most the grader reads of one submission" in p]
    assert len(refused) == 1 and len(intake.files) == 3


def test_a_folder_of_more_names_than_are_looked_at_gets_a_note_and_its_notebooks_graded(course, monkeypatch):
    folder = _folder(course)
    monkeypatch.setattr(files, "MAX_LISTING", 50)
    monkeypatch.setattr(take, "MAX_LISTING", 50)
    for i in range(60):
        (folder / f"{i:02d}.txt").touch()
    intake = intake_submission(folder, read_course(course, A), "correct-1")
    assert any("more than 50 names" in n for n in intake.notes)
    assert len(intake.files) == 4


def _hostile(folder: Path) -> None:
    """A sparse notebook, a FIFO in place of another, and 2,000 sparse files claiming 500 GB."""
    nb = folder / f"{NB}.ipynb"
    with open(nb, "r+b") as f:
        f.truncate(nb.stat().st_size + (200 << 20))
    (folder / "ex3_memory.ipynb").unlink()
    os.mkfifo(folder / "ex3_memory.ipynb")
    for i in range(2_000):
        _sparse(folder / f"junk{i:04d}.bin", 256 << 20)


def test_sparse_many_and_fifo_files_cost_their_submitter_only_through_grade_resume_and_check(course, tmp_path,
                                                                                          bytes_read, capsys):
    """``grade`` grades the honest classmate in full and the hostile one with notes; ``--resume`` takes both
    as graded (the digest reads the notebooks only: a few hundred KB, not 500 GB); ``check`` says the same."""
    import json
    from autograder import __main__ as cli
    from autograder.run.batch import grade_batch
    from batch_helpers import records
    hostile = _folder(course, "no-scaling")
    _hostile(hostile)
    out = tmp_path / "out"
    grade_batch(course=course, out=out, workers=1, progress=False, outputs=False)
    got = records(out)
    honest, bad = got["correct-1"], got["no-scaling"]
    assert honest["total"] == honest["max_total"] and not honest["needs_review"]
    assert any("sparse file" in p for p in bad["integrity"]) and any("FIFO" in p for p in bad["integrity"])
    bytes_read[0] = 0
    again = grade_batch(course=course, out=out, workers=1, progress=False, outputs=False, resume=True)
    assert again.graded == [] and sorted(again.skipped) == ["correct-1", "no-scaling"]
    assert bytes_read[0] < 8 << 20                             # the notebooks of two students, not the holes
    capsys.readouterr()
    assert cli.main(["check", str(hostile), "--json"]) == 0
    assert any("sparse file" in p for p in json.loads(capsys.readouterr().out)["integrity"])
