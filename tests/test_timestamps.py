"""timestamp.txt: parsed as nbgrader parses it; hostile files give a note, never a crash or a stray read."""
import os
import threading
from datetime import datetime

import pytest

from autograder.gradebook.timestamps import MAX_BYTES, Submitted, parse_utc, read_timestamp

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


@pytest.mark.parametrize("year", [1, 27, 31, 999, 2026])
def test_a_time_written_back_reads_the_same_in_nbgrader(year):
    """What we write into the gradebook for a student's timestamp.txt, nbgrader's parse_utc reads back
    as the same time (year 31 written as "31-06-15" broke the gradebook update for the whole class)."""
    from nbgrader.utils import parse_utc
    at = datetime(year, 6, 15, 1, 2, 3)
    text = Submitted(at=at).text()
    assert text.startswith(f"{year:04d}-06-15") and parse_utc(text).replace(tzinfo=None) == at
