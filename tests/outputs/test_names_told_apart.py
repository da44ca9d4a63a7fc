"""A name a person reads is told apart from every other name in the same output (issue 35, item 3): ``alice `` (a
trailing space) once appeared as a second ``alice`` in the terminal and grades.csv, and the Canvas export left
the real alice's cell empty. Every Unicode space (category Zs and every other whitespace code point), every
character Unicode names as drawing nothing (fillers, variation selectors, joiners, the blank braille cell) and
look-alike letters, at the start, the end and inside a name, next to the plain name, in every output that shows
names: the terminal's table, grades.csv, the report page, a message's ``shown``, and the LMS match."""
import csv
import html.parser
import io
import re
import sys
import unicodedata

import pytest

from autograder.gradebook.totals import Total
from autograder.inert import looks_like, shown, shown_id, told_apart
from autograder.outputs.csvout import write_grades_csv
from autograder.outputs.lms import merge_canvas, merge_moodle
from autograder.outputs.report import report_html
from autograder.run.batch import failed_record
from autograder.textreport import summary_table

SPACES = sorted({chr(c) for c in range(sys.maxunicode + 1)
                 if unicodedata.category(chr(c)) == "Zs" or chr(c).isspace()})
BLANK_BY_NAME = ("HANGUL FILLER", "HANGUL CHOSEONG FILLER", "HANGUL JUNGSEONG FILLER", "SMALL SCRIPT FILLER", "VARIATION SELECTOR", "GRAPHEME JOINER", "KHMER VOWEL INHERENT", "BRAILLE PATTERN BLANK",
                 "ZERO WIDTH", "WORD JOINER", "INVISIBLE")
_BLANK_NAME = re.compile("|".join(map(re.escape, BLANK_BY_NAME)))   # one search a code point: 0.2 s, not 1.9 s
DRAWN_BLANK = sorted({chr(c) for c in range(sys.maxunicode + 1) if _BLANK_NAME.search(unicodedata.name(chr(c), ""))})
LOOK_ALIKES = ["\u0430lice", "alic\u0435", "\uff41lice", "al\u0456ce", "a\u217cice", "aIice", "a1ice"]


def _variants(ch: str) -> list[str]:
    return [f"alice{ch}", f"{ch}alice", f"al{ch}ice", f"alice{ch}{ch}", f"al{ch}{ch}ice"]


def test_the_characters_under_test_are_every_space_and_every_blank():
    assert len(SPACES) >= 25 and {" ", "\u00a0", "\u3000", "\u2028", "\x85", "\x1f"} <= set(SPACES)
    assert len(DRAWN_BLANK) >= 250 and {"\u3164", "\ufe0f", "\u2800", "\u034f", "\u200b"} <= set(DRAWN_BLANK)


def _as_read(form: str) -> str:
    """What a reader takes a shown name for: what draws nothing gone, the spaces of a table's padding and of a
    page's collapsed runs gone, letters that look alike as one (UTS #39)."""
    return looks_like(" ".join("".join(ch for ch in form if ch not in _BLANK).split()))


_BLANK = frozenset(DRAWN_BLANK)


def _reads_alike(a: str, b: str) -> bool:
    return _as_read(a) == _as_read(b)


def _all_told_apart(shown_as: dict[str, str], data: bool = False) -> None:
    """No two forms read alike; with ``data`` (grades.csv, which an LMS may import by id), two ids that are both
    printable ASCII are kept as written even when their letters look alike (``aIice``, ``alice``)."""
    read: dict[str, list[str]] = {}
    for name, form in shown_as.items():
        read.setdefault(_as_read(form), []).append(name)
    for alike in read.values():
        kept = data and all(n.isascii() and n.isprintable() for n in alike) and len({" ".join(
            shown_as[n].split()) for n in alike}) == len(alike)
        assert kept or len(alike) == 1, [(n, shown_as[n]) for n in alike]


@pytest.mark.parametrize("letters", [False, True])
@pytest.mark.parametrize("group", ["spaces", "blank", "look-alikes"])
def test_every_space_blank_and_look_alike_is_told_apart_from_the_plain_name(group, letters):
    chars = {"spaces": SPACES, "blank": DRAWN_BLANK, "look-alikes": []}[group]
    names = ["alice", "al ice", *(v for ch in chars for v in _variants(ch)), *LOOK_ALIKES]
    names = list(dict.fromkeys(names))
    _all_told_apart(told_apart(names, letters=letters), data=not letters)
    # A message names one student at a time, with no class at hand: every name there but one of printable ASCII
    # (``aIice``: spelling every I, 1 and 0 of every message would bury the name) reads unlike alice.
    for name in names:
        if name not in ("alice", "al ice") and not (name.isascii() and name.isprintable()):
            assert not _reads_alike(shown(name)[1:-1], "alice") and not _reads_alike(shown(name)[1:-1], "al ice")
            if name not in LOOK_ALIKES:        # a page with one name (a student's own) shows it by shown_id
                assert not _reads_alike(shown_id(name), "alice")


CLASS = ["alice", "alice ", " alice", "al  ice", "al ice", "alice\u00a0", "alice\u3000", "alice\u2800",
         "alice\u3164", "alice\ufe0f", "\u0430lice", "alice\t"]


def _page_text(page: str) -> str:
    """The text a browser shows: tags gone, every run of white space one space."""
    parts = []

    class Text(html.parser.HTMLParser):
        def handle_data(self, data):
            parts.append(data)
    Text(convert_charrefs=True).feed(page)
    return " ".join(" ".join(parts).split())             # (a space between cells, as a table draws them)


def test_the_terminal_grades_csv_and_the_report_tell_a_class_of_alices_apart(tmp_path):
    records = [failed_record(s, "x") for s in CLASS]
    table = summary_table(records).splitlines()[1:len(CLASS) + 1]
    in_table = [row.split("  ")[0].rstrip() for row in table]          # what a reader takes for the name
    assert len(set(in_table)) == len(CLASS) and not any(_reads_alike(a, b) for i, a in enumerate(in_table)
                                                      for b in in_table[i + 1:])
    write_grades_csv(tmp_path / "grades.csv", records)
    with open(tmp_path / "grades.csv", newline="") as f:
        in_csv = [row["student_id"] for row in csv.DictReader(f)]
    assert len(in_csv) == len(CLASS)
    _all_told_apart(dict(zip(in_csv, in_csv)), data=True)
    page = _page_text(report_html(records, "ch04_attention"))
    names = told_apart(CLASS, letters=True)
    assert all(f" {names[s]} " in f" {page} " for s in CLASS)
    _all_told_apart(names)


CANVAS = ("Student,ID,SIS User ID,SIS Login ID,Section,ch04_attention (5501)\r\n"
          "    Points Possible,,,,,28.00\r\n"
          '"Liddell, Alice",101,S001,alice,Section A,\r\n'
          '"Hopper, Grace",102,S002,grace,Section B,\r\n')


@pytest.mark.parametrize("ch", [" ", "  ", "\u00a0", "\u3000", "\u200b", "\u3164", "\ufe0f", "\t", "\u0435"])
def test_the_lms_match_never_merges_alice_with_a_name_that_differs_invisibly(ch):
    """The gradebook holds alice and a student whose id differs by ``ch``: the real alice's cell gets her own
    score, and the other is named, visibly, as not in the export; at the start, the end and inside."""
    for other in (f"alice{ch}", f"{ch}alice", f"ali{ch}ce"):
        totals = [Total("alice", 25.0, 28.0), Total(other, 3.0, 28.0), Total("grace", 20.0, 28.0)]
        merged = merge_canvas(CANVAS, totals, column="ch04_attention")
        rows = {r[3]: r[5] for r in csv.reader(io.StringIO(merged.text))}
        assert rows["alice"] == "25" and rows["grace"] == "20" and merged.filled == 2, (other, merged.notes)
        [note] = merged.notes
        assert "not in the Canvas export" in note and shown(other) in note and "'alice'" not in note


def test_two_students_one_e_mail_address_place_neither_and_are_named_once():
    moodle = ("First name,Last name,ID number,Institution,Department,Email address,Assignment: ch04_attention (Real)\r\n"
              "Alice,Liddell,S001,,,alice@example.edu,-\r\n")
    totals = [Total("alice", 25.0, 28.0, "alice@example.edu"), Total("mallory", 3.0, 28.0, " Alice@Example.edu ")]
    merged = merge_moodle(moodle, totals, column="ch04_attention", match="email")
    assert merged.filled == 0
    notes = " ".join(merged.notes)
    assert "shared by two students" in notes and "'alice' and 'mallory'" in notes
    assert notes.count("'mallory'") == 1                     # said once: not again as "not in the export"
