"""timestamp.txt: parsed as nbgrader parses it; hostile files give a note, never a crash or a stray read."""
import os
import re
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.gradebook.lateness import Lateness
from autograder.gradebook.latepenalties import LatePenalties
from autograder.gradebook.messages import Answer
from autograder.gradebook.timestamps import MAX_BYTES, Submitted, parse_utc, read_timestamp, written_time
from autograder.outputs.csvout import csv_row
from autograder.records import Record

VALID = ["2026-11-30 12:00:00.123456 UTC", "2026-11-30 12:00:00 America/Los_Angeles", "2026-11-30 12:00:00 PST",
         "2026-11-30 12:00:00 -0800", "2026-11-30T12:00:00+02:00", "2026-11-30 12:00:00", "2026-11-30 12:00:00 +5",
         "2026-12-01 00:30:00.000001 Europe/Paris", "2026-11-30 12:00:00 Etc/GMT+5"]


@pytest.mark.parametrize("text", VALID)
def test_same_time_as_nbgrader(text):
    from nbgrader.utils import parse_utc as nbgrader_parse_utc
    assert parse_utc(text) == nbgrader_parse_utc(text)


def test_reads_a_submission_timestamp(tmp_path):
    (tmp_path / "timestamp.txt").write_text("2026-11-30 12:00:00.5 Europe/Paris\n")
    submitted = read_timestamp(tmp_path)
    assert submitted.note is None and submitted.text() == "2026-11-30 11:00:00.500000 UTC"
    assert parse_utc(submitted.text()) == submitted.at                  # what we write back reads the same
    assert read_timestamp(tmp_path / "nowhere").at is None and read_timestamp(tmp_path / "x").note is None


def _fifo(path):
    os.mkfifo(path)


def _link(path):
    (path.parent / "secret").write_text("2026-11-30 12:00:00 UTC")
    path.symlink_to(path.parent / "secret")


@pytest.mark.parametrize("make, says", [
    (lambda p: p.write_text(""), "is empty"),
    (lambda p: p.write_text("yesterday-ish"), "not a time"),
    (lambda p: p.write_text("2026-11-30 12:00:00 /etc/localtime"), "not a time"),
    (lambda p: p.write_text("2026-11-30 12:00:00 ../../zoneinfo/UTC"), "not a time"),
    (lambda p: p.write_bytes(b"\xff\xfe2026"), "not a time"),
    (lambda p: p.write_text("9" * 40 + "-01-01 00:00:00 UTC"), "not a time"),
    (lambda p: p.write_text("2026-11-30 12:00:00 UTC" + " " * MAX_BYTES), "longer than"),
    (lambda p: p.mkdir(), "not a regular file"),
    (_fifo, "not a regular file"),
    (_link, "could not be read"),
])
def test_hostile_timestamp_gives_a_note(tmp_path, make, says):
    make(tmp_path / "timestamp.txt")
    done = []
    worker = threading.Thread(target=lambda: done.append(read_timestamp(tmp_path)), daemon=True)
    worker.start()
    worker.join(10)                                   # a FIFO with no writer must not block
    assert done, "read_timestamp blocked"
    assert done[0].at is None and says in done[0].note and "lateness was not checked" in done[0].note


ANY_TIME = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999999))


@settings(max_examples=150, deadline=None, database=None)
@given(at=ANY_TIME)
def test_every_written_time_reads_back_the_same_in_nbgrader(at):
    """Every time the grader writes (the one writer, what the gradebook is given, grades.csv, the
    feedback's timestamp.txt, the gradebook's answer of the submission and due time) reads back in
    nbgrader's parse_utc as the same time, for years 1 to 9999 (year 31 written "31-06-15" broke the
    gradebook update for the whole class; latepenalties.py wrote it with strftime)."""
    from nbgrader.utils import parse_utc as nbgrader_parse_utc
    submitted = Submitted(at=at)
    answer = LatePenalties(course=None).assign(_OneSubmission(at), "hw", "ann")
    late = Lateness.from_gradebook(Answer.from_dict(answer), submitted)             # feedback/<student>/<a>/timestamp.txt
    written = [written_time(at), submitted.text(), answer["submitted"], answer["due"], late.submitted,
               csv_row(Record("ann", []), late)["submitted"]]
    for text in written:
        assert nbgrader_parse_utc(text).replace(tzinfo=None) == at, text
        assert text.startswith(f"{at.year:04d}-")


def test_an_aware_time_is_written_in_utc():
    paris = datetime(31, 6, 15, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    assert written_time(paris) == "0031-06-15 10:00:00.000000 UTC"


class _OneSubmission:
    """The part of nbgrader's Gradebook that LatePenalties reads: one submission, on time."""

    def __init__(self, at):
        self.at = at

    def find_submission(self, assignment, student):
        return SimpleNamespace(total_seconds_late=0.0, notebooks=[], duedate=self.at, timestamp=self.at)


def test_times_have_one_writer():
    """No module but timestamps.py formats a time (strftime, isoformat): a second writer is a second truth."""
    package = Path(__file__).resolve().parents[2] / "autograder"
    writers = sorted(str(p.relative_to(package)) for p in package.rglob("*.py")
                     if re.search(r"\.(strftime|isoformat)\(", p.read_text()) and p.name != "timestamps.py")
    assert writers == []


def test_lti_times_are_iso_with_their_offset_and_naive_means_utc():
    from autograder.gradebook.timestamps import iso_time
    assert iso_time(datetime(2026, 3, 1, 9, 30)) == "2026-03-01T09:30:00.000000+00:00"
    paris = datetime(2026, 3, 1, 10, 30, tzinfo=timezone(timedelta(hours=1)))
    assert iso_time(paris) == "2026-03-01T10:30:00.000000+01:00"
