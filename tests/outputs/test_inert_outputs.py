"""Outputs are inert: spreadsheet formulas, terminal escapes, odd student ids, write errors, NaN in JSON."""
import csv
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

import autograder.outputs.write as outputs
import autograder.outputs.feedback as feedback
from autograder import __main__ as cli
from autograder.course.view import course_settings
from autograder.run.batch import failed_record, grade_batch
from autograder.inert import csv_cell, terminal
from autograder.outputs.csvout import write_grades_csv
from autograder.records import Finding, OutputError, atomic_write, file_name, read_record, record_path, write_record
from autograder.textreport import check_table
from batch_helpers import make_class, read_csv

FORMULAS = ['=HYPERLINK("http://evil.example","click")', "+1+1", "-2+3", "@SUM(A1:A9)", "\tx", "\rx"]
ODD_IDS = ["s" * 240, "é" * 127 + "x", "-leading-dash", "..dots..", "日本語 name", "=1+1"]


def _strict_json(text):
    def refuse(name):
        raise ValueError(f"{name} is not JSON")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("student", FORMULAS)
def test_csv_cells_never_start_a_formula(tmp_path, student):
    write_grades_csv(tmp_path / "grades.csv", [failed_record(student, "x")])
    with open(tmp_path / "grades.csv", newline="") as f:
        row = next(csv.DictReader(f))
    shown = {"\tx": "\\x09x", "\rx": "\\x0dx"}.get(student, "'" + student)     # a tab or bare CR shown, not kept
    assert row["student_id"] == shown and not shown.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert row["total"] == "0" and row["max_total"] == "28"          # numbers stay numbers


def test_csv_cell_keeps_numbers_and_plain_text():
    assert csv_cell(-3) == -3 and csv_cell(2.5) == 2.5 and csv_cell("ann") == "ann" and csv_cell("-3") == "'-3"


@pytest.mark.parametrize("text, shown", [
    ("\x1b[2J\x1b[Hcleared", "cleared"), ("\x1b]0;title\x07x", "x"), ("\x1b]8;;http://e\x1b\\link", "link"),
    ("\x9b31mred", "red"), ("a\x00b\x07c\x7fd", "a\\x00b\\x07c\\x7fd"), ("\u202eevil", "\\u202eevil"),
    ("zero\u200bwidth\ufeff", "zero\\u200bwidth\\ufeff"), ("nb\u00a0sp", "nb\\xa0sp"), ("tab\tand\nline", "tab\tand\nline"),
])
def test_terminal_strips_escapes_and_shows_hidden_characters(text, shown):
    assert terminal(text) == shown


def test_check_table_cannot_be_rewritten_by_student_text():
    record = failed_record("s\x1b[31m1", "boom")
    record = replace(record, checks=[replace(record.checks[0], message="wrong\n\ntotal 28/28\x1b[2J\x1b]0;owned\x07"),
                                     *record.checks[1:]],
                     notes=["Cell 3 raised ValueError: \x1b[1A\x1b[2Ktotal 28/28"],
                     findings=[*record.findings, Finding("name '\x9b2J'\nfake")])
    table = check_table(record)
    assert "\x1b" not in table and "\x07" not in table and "\x9b" not in table
    assert [line for line in table.splitlines() if line.startswith("total")] == ["total 0/28  (needs review)"]


def test_check_json_is_valid_json_even_with_nan(monkeypatch, capsys, tmp_path):
    record = failed_record("s1", "x")
    nan = {"student_weights": [[float("nan"), float("inf")]]}
    record = replace(record, checks=[replace(record.checks[0], details=nan), *record.checks[1:]])
    monkeypatch.setattr("autograder.run.check.check_submission", lambda *a, **k: record)
    assert cli.main(["check", str(tmp_path), "--json"]) == 0
    printed = _strict_json(capsys.readouterr().out)
    assert printed["checks"][0]["details"]["student_weights"] == [[None, None]]


@pytest.mark.parametrize("student", [*ODD_IDS, "x" * 255, "ü" * 127])
def test_any_student_id_gives_a_record_file_that_fits(tmp_path, student):
    name = file_name(student, ".json")
    assert len(name.encode()) <= 255 and not name.startswith((".", "-")) and "/" not in name
    record = failed_record(student, "x", assignment="a")
    write_record(tmp_path, record)
    assert read_record(tmp_path, student, "a").student_id == student
    assert record_path(tmp_path, student).exists()


def test_temporary_names_do_not_grow_with_the_file_name(tmp_path):
    target = tmp_path / ("n" * 255)                                # the longest name a folder can hold
    atomic_write(target, "{}")
    assert target.read_text() == "{}" and os.listdir(tmp_path) == [target.name]


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_written_files_follow_the_umask_as_a_plain_open_would(tmp_path, umask):
    old = os.umask(umask)
    try:
        atomic_write(tmp_path / "page.html", "<p>")
    finally:
        os.umask(old)
    assert (tmp_path / "page.html").stat().st_mode & 0o777 == 0o666 & ~umask


def test_distinct_long_ids_never_share_a_record(tmp_path):
    a, b = "s" * 239 + "a", "s" * 239 + "b"
    assert file_name(a, ".json") != file_name(b, ".json")


class _Gradebook:
    def __init__(self):
        self.records = None

    def finish(self, records, submitted=None, fresh=None):
        self.records = records
        return {}


def test_one_students_output_error_never_stops_the_class(tmp_path, monkeypatch):
    records = [failed_record(s, "x") for s in ("ann", "bob", "cid")]
    real = feedback.write_feedback

    def flaky(path, record, late=None):
        if record.student_id == "bob":
            raise OutputError("could not write bob's page: No space left on device")
        real(path, record, late)
    monkeypatch.setattr(feedback, "write_feedback", flaky)
    gradebook = _Gradebook()
    errors = outputs.write_outputs(tmp_path, records, settings=course_settings(tmp_path / "course"), assignment="a",
                                   gradebook=gradebook).errors
    assert len(errors) == 1 and "'bob'" in errors[0] and "No space left" in errors[0]
    assert (tmp_path / "feedback/ann/index.html").exists() and (tmp_path / "feedback/cid/index.html").exists()
    assert (tmp_path / "results/bob/results.json").exists() and len(gradebook.records) == 3


NOT_UTF8 = os.fsdecode(b"bytes-\xff\xfe")          # a folder name that is not text


def test_a_class_of_odd_ids_is_graded_whole(tmp_path):
    course = make_class(tmp_path, [], custom={s: {} for s in [*ODD_IDS, NOT_UTF8]})
    result = grade_batch(course=course, out=tmp_path / "out", workers=2, progress=False)
    # only nbgrader's gradebook cannot hold two of them (text that is not UTF-8, an id over its 128 characters)
    not_text, too_long = sorted(result.errors)
    assert "'bytes-\\xff\\xfe' is not UTF-8 text" in not_text and "by hand" in not_text
    assert "240 characters long" in too_long and "by hand" in too_long
    assert sorted(r.student_id for r in result.records) == sorted([*ODD_IDS, NOT_UTF8])
    assert all(r.total == 28 for r in result.records)
    rows = {row["student_id"]: row for row in read_csv(tmp_path / "out/grades.csv")}
    assert set(rows) == {("'" + s if s[0] in "=-" else s) for s in ODD_IDS} | {"bytes-\\xff\\xfe"}
    for student in [*ODD_IDS, NOT_UTF8]:
        assert (tmp_path / "out/feedback" / student / "index.html").exists()
        _strict_json((tmp_path / "out/results" / student / "results.json").read_text())
    assert all(len(os.fsencode(p.name)) <= 255 for p in Path(tmp_path / "out").rglob("*"))


def test_a_non_utf8_id_reaches_the_terminal_as_visible_escapes():
    """A folder name with bytes that are not UTF-8 (0x9b is CSI on 8-bit terminals) is shown as
    ``\\x9b``: no raw byte reaches the terminal, and a strict UTF-8 stdout can still print it."""
    from autograder.textreport import summary_table
    table = summary_table([failed_record("bad\udcff\udc9bid", "stands for a graded submission")])
    assert "bad\\xff\\x9bid" in table
    table.encode("utf-8")                                         # strict: raises on a lone surrogate
    assert terminal("a\ud800b") == "a\\ud800b" and csv_cell("\udcff") == "\\xff"
