"""A class whose rows nbgrader's gradebook refuses in the middle of it, written by the gradebook writer's own
``write_scores`` on any database (SQLite here, a real PostgreSQL server under tests/env/postgres/)."""
from __future__ import annotations

import math
import os
from pathlib import Path

from autograder.course.settings import load_course
from autograder.gradebook.latepenalties import LatePenalties
from autograder.gradebook.messages import Scores
from autograder.gradebook.nbgrader_api import nbgrader_api, one_transaction, stamp_new
from autograder.gradebook.scores import BATCH, record_assignment, write_scores
from autograder.grading.rubric import RUBRIC
from conftest import ROOT

ASSIGNMENT = "ch04_attention"
FULL = {grade_id: float(sum(item.points for item in items)) for grade_id, items in RUBRIC.items()}
LATE = "2031-01-01 00:00:00.000000 UTC"           # after the due date the class is given
NOT_UTF8 = os.fsdecode(b"bytes-\xff\xfe")

# id -> words of the one line that refuses it. Every id here fits a file name (at most 255 bytes).
REFUSED = {"c" * 140: "140 characters long", "x" * 129: "129 characters long", "\u00e9" * 127 + "zz": "129 char",
           "z" * 255: "255 characters long", NOT_UTF8: "not UTF-8 text", "nul\x00id": "NUL character",
           "no-score": "no finite score"}
# ids at or under the limit, some of many bytes (PostgreSQL counts characters): all kept
FITS = ["y" * 128, "\u00e9" * 128, "\U0001f600" * 128, "alice ", " alice", "a\u00a0b", "'; DROP TABLE student;--"]
HONEST = ["ann", "bob", "cid", "dee", "eve", "fay"]


def the_class() -> list[Scores]:
    """Honest students and refused ids interleaved, so every batch of ``BATCH`` holds a refused one."""
    hostile = list(REFUSED) + FITS
    order = [s for pair in zip(HONEST + [None] * len(hostile), hostile) for s in pair if s is not None]
    assert all(any(s in REFUSED for s in order[i:i + BATCH]) for i in range(0, len(REFUSED) * 2, BATCH))
    return [Scores(s, {**FULL, "ex1_attention": math.nan} if s == "no-score" else FULL, submitted=LATE)
            for s in order]


def late_plugin(course: Path, fails_for: str) -> None:
    """The course's late-penalty plugin (the instructor's code) raises for one student only."""
    (course / "nbgrader_config.py").write_text(
        'c = get_config()\nc.CourseDirectory.course_id = "attention-course"\n'
        'c.AssignLatePenalties.plugin_class = "late.Picky"\n')
    (course / "late.py").write_text(
        "from nbgrader.plugins import LateSubmissionPlugin\n\n\nclass Picky(LateSubmissionPlugin):\n"
        "    def late_submission_penalty(self, student_id, score, total_seconds_late):\n"
        f"        if student_id == {fails_for!r}:\n"
        "            raise ValueError('no penalty table for ' + student_id)\n"
        "        return 1.0\n")


def write_class(url: str, scores: list[Scores], course: Path | None = None) -> dict:
    """``write_scores`` of ``scores`` into a new gradebook at ``url`` (due in 2030); the writer's answer."""
    stamp_new(url)
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        with one_transaction(gb):
            record_assignment(gb, ROOT, ASSIGNMENT)
            gb.update_or_create_assignment(ASSIGNMENT, duedate="2030-01-01 00:00:00")
        return write_scores(gb, ASSIGNMENT, scores, LatePenalties(load_course(course or ROOT)))


def in_gradebook(url: str) -> dict[str, float]:
    """student -> score, read back with a new session."""
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        return {s.student.id: s.score for s in gb.find_assignment(ASSIGNMENT).submissions}


def assert_only_refused_left_out(answer: dict, written: dict[str, float], refused: dict[str, str]) -> None:
    """Every student but the refused is in the gradebook, whole; each refused one has exactly one line, naming it."""
    total = sum(FULL.values())
    kept = [s for s in answer if s not in refused]
    assert sorted(written) == sorted(kept) and all(written[s] == total for s in kept), written
    for student, words in refused.items():
        why = answer[student].refused
        assert words in why and "\n" not in why and "grades.csv" in why, why
    assert not any(answer[s].refused for s in kept)
