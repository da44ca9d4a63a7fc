"""The LMS export: the assignment's totals merged into Canvas's and Moodle's own gradebook exports.

The exports here are shaped as the LMSs document them: Canvas (Grades, Export) has Student, ID, SIS User
ID, SIS Login ID, Section, then "Name (id)" per assignment and read-only totals, with a "Points Possible"
second row; Moodle (Export, Plain text file) has the user's profile fields, then "Type: Name (Real)" per
grade item.
"""
import csv
import io
import subprocess
import sys

import pytest

from batch_helpers import export_rows, make_class
from gradebook_helpers import fill_gradebook, set_grade
from autograder.gradebook.totals import Total
from autograder.outputs.lms import LmsFormatError, merge_canvas, merge_moodle

pytestmark = pytest.mark.filterwarnings("ignore:.*not in session")      # nbgrader's own add_submission

CANVAS = (
    "Student,ID,SIS User ID,SIS Login ID,Section,ch04_attention (5501),Quiz 1 (5502),Current Points,Final Points,"
    "Current Score,Unposted Current Score,Final Score,Unposted Final Score\r\n"
    "    Points Possible,,,,,28.00,10.00,(read only),(read only),(read only),(read only),(read only),(read only)\r\n"
    '"Lovelace, Ada",101,S001,ada,Section A,,9.00,9.00,9.00,90.00,90.00,90.00,90.00\r\n'
    '"Hopper, Grace",102,S002,grace,Section B,3.00,-1.50,1.50,1.50,15.00,15.00,15.00,15.00\r\n'
    '"Turing, Alan",103,S003,alan,Section A,,EX,,,,,,\r\n'
    '"Student, Test",999,,,Section A,,,,,,,,\r\n')

MOODLE = (
    "First name,Last name,ID number,Institution,Department,Email address,Assignment: ch04_attention (Real),"
    "Quiz: Quiz 1 (Real),Course total (Real),Last downloaded from this course\r\n"
    "Ada,Lovelace,S001,,,Ada@Example.edu,-,9.00,9.00,1764600000\r\n"
    "Grace,Hopper,S002,,,grace@example.edu,-,-,-,1764600000\r\n"
    "Alan,Turing,S003,,,alan@example.edu,-,-,-,1764600000\r\n")

TOTALS = [Total("ada", 25.5, 28.0, "ada@example.edu"), Total("grace", 20.0, 28.0, "grace@example.edu"),
          Total("linus", 12.0, 28.0, "linus@example.edu"), Total("alan", 0.0, 28.0, "alan@example.edu", False)]


def _table(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))


def test_canvas_the_assignment_s_column_is_filled_and_every_other_cell_is_kept():
    merged = merge_canvas(CANVAS, TOTALS, column="ch04_attention", match="login")
    before, after = _table(CANVAS), _table(merged.text)
    at = before[0].index("ch04_attention (5501)")
    assert after[0] == before[0] and len(after) == len(before)
    assert {r[3]: r[at] for r in after[2:]} == {"ada": "25.5", "grace": "20", "alan": "0", "": ""}
    for old, new in zip(before, after):            # nothing else changed (Canvas ignores unchanged cells)
        assert [c for i, c in enumerate(old) if i != at] == [c for i, c in enumerate(new) if i != at]
    assert after[1][at] == "28.00" and merged.filled == 3 and not merged.added
    notes = " ".join(merged.notes)
    assert "'Student, Test' (SIS Login ID '': no key)" in notes
    assert "'linus' (12)" in notes                 # graded but not in Canvas: named, with the score


def test_canvas_matches_by_sis_user_id_or_by_email_in_the_login():
    by_sis = merge_canvas(CANVAS, [Total("S002", 7.0, 28.0)], column="ch04_attention", match="sis")
    assert _table(by_sis.text)[3][5] == "7"
    logins = CANVAS.replace(",ada,", ",ADA@example.edu,")
    by_email = merge_canvas(logins, TOTALS, column="ch04_attention", match="email")
    assert _table(by_email.text)[2][5] == "25.5"


def test_canvas_a_new_column_is_added_with_its_points_possible():
    merged = merge_canvas(CANVAS, TOTALS, column="Attention (hardened)", match="login")
    after = _table(merged.text)
    assert merged.added and after[0][-1] == "Attention (hardened)" and after[1][-1] == "28"
    assert [r[-1] for r in after[2:]] == ["25.5", "20", "0", ""]


def test_canvas_points_that_differ_from_the_assignment_s_are_said():
    merged = merge_canvas(CANVAS.replace("28.00,10.00", "100.00,10.00"), TOTALS, column="ch04_attention")
    assert any("out of 100.00 points" in n and "out of 28" in n for n in merged.notes)


def test_students_who_cannot_be_matched_are_named_never_dropped():
    twice = CANVAS.replace("103,S003,alan", "103,S003,grace")            # two Canvas rows, one login
    merged = merge_canvas(twice, TOTALS, column="ch04_attention")
    notes = " ".join(merged.notes)
    assert "2 rows share it" in notes and "'Hopper, Grace'" in notes and "'Turing, Alan'" in notes
    assert "'grace' (20)" in notes and "'alan' (0)" in notes and "'linus' (12)" in notes
    same_email = [Total("a", 1, 28, "x@y"), Total("b", 2, 28, "X@Y")]
    assert merge_canvas(CANVAS.replace(",ada,", ",x@y,"), same_email, column="ch04_attention",
                        match="email").filled == 0


HOSTILE = ["=HYPERLINK(\"http://evil\",\"x\")", "+1+1", "-2+3", "@SUM(A1)", "\tTab", "\rCR", "\u202eevil\u202c",
           'quote "q", comma', "\ufeffbom"]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_are_kept_apart_and_no_cell_runs_as_a_formula(name):
    text = "\ufeff" + CANVAS.replace('"Lovelace, Ada"', _quoted(name)).replace(",ada,", f",{_quoted(name)},")
    merged = merge_canvas(text, [Total(name, 4.0, 28.0)], column="ch04_attention")
    row = _table(merged.text)[2]
    assert row[5] == "4" and merged.filled == 1             # matched by the login, hostile as it is
    for cell in (row[0], row[3]):
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
        assert "\u202e" not in cell and "\r" not in cell
    if name.startswith(("=", "+", "-", "@", "\t", "\r")):
        assert row[0].startswith("'")
    assert all(not c.startswith(("=", "+", "@")) for r in _table(merged.text) for c in r)
    assert "\u202e" not in " ".join(merged.notes)


def test_hostile_names_in_notes_are_shown_visibly():
    merged = merge_canvas(CANVAS.replace('"Lovelace, Ada"', "\u202eevil"), [], column="ch04_attention")
    assert "\\u202e" in " ".join(merged.notes) and "\u202e" not in " ".join(merged.notes)


def test_plain_numbers_in_other_columns_stay_numbers():
    row = _table(merge_canvas(CANVAS, TOTALS, column="ch04_attention").text)[3]
    assert row[6] == "-1.50"                       # Grace's quiz: a number, not a formula, kept as it was


def test_a_file_that_is_not_a_canvas_export_is_refused():
    with pytest.raises(LmsFormatError, match="not a Canvas gradebook export.*SIS Login ID"):
        merge_canvas("Student,ID,Section\r\nAda,1,A\r\n", TOTALS, column="x")
    with pytest.raises(LmsFormatError, match="2 columns"):
        merge_canvas(CANVAS.replace("Quiz 1 (5502)", "ch04_attention (5503)"), TOTALS, column="ch04_attention")


def test_moodle_the_grade_item_is_filled_matched_by_email():
    merged = merge_moodle(MOODLE, TOTALS, column="ch04_attention")
    before, after = _table(MOODLE), _table(merged.text)
    assert after[0] == before[0]
    assert [r[6] for r in after[1:]] == ["25.5", "20", "0"]        # Ada@Example.edu matched ada@example.edu
    assert [r[7] for r in after[1:]] == ["9.00", "-", "-"]        # Moodle's "no grade" dash kept
    assert merged.filled == 3 and "'linus' (12)" in " ".join(merged.notes)


def test_moodle_match_by_id_number_and_a_missing_username_column():
    merged = merge_moodle(MOODLE, [Total("S003", 5.0, 28.0)], column="ch04_attention", match="sis")
    assert _table(merged.text)[3][6] == "5"
    with pytest.raises(LmsFormatError, match="no 'Username' column"):
        merge_moodle(MOODLE, TOTALS, column="ch04_attention", match="login")
    added = merge_moodle(MOODLE, TOTALS, column="Attention lab")
    assert added.added and _table(added.text)[0][-1] == "Attention lab"


def _quoted(cell: str) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="", quoting=csv.QUOTE_ALL).writerow([cell])
    return buf.getvalue()


CANVAS_CLASS = ("Student,ID,SIS User ID,SIS Login ID,Section,ch04_attention (77),Current Points\r\n"
                "    Points Possible,,,,,28.00,(read only)\r\n"
                '"One, Ada",1,S1,ada,A,,\r\n"Two, Bob",2,S2,bob,A,,\r\n"Three, Cy",3,S3,cy,B,,\r\n'
                '"Four, Di",4,S4,di,B,,\r\n"Five, Eve",5,S5,eve,B,,\r\n')


def lms_class(url: str, course) -> None:
    """ada full marks, bob with a manual score, cy late (a penalty), di with extra credit, eve on the roster only."""
    fill_gradebook(url, course, {"ada": {}, "bob": {"ex2_causal": 2.0}, "cy": {"ex4_cross": 1.0},
                                 "di": {"ex1_attention": 4.0}, "zed": {}}, roster=["eve"])
    set_grade(url, "bob", "ex2_causal", manual=5.5)
    set_grade(url, "cy", "ex4_cross", manual=None, penalty=6.0)
    set_grade(url, "di", "ex1_attention", extra_credit=1.5)


def check_canvas_export(course, url: str, tmp_path) -> None:
    """``python -m autograder export --canvas`` gives each student nbgrader export's score."""
    export = tmp_path / "canvas.csv"
    export.write_text(CANVAS_CLASS)
    proc = subprocess.run([sys.executable, "-m", "autograder", "export", "--canvas", str(export), "--course",
                           str(course), "--gradebook", url], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    written = course / "grading" / "canvas-ch04_attention.csv"
    assert proc.stdout.strip() == f"5 scores in the column 'ch04_attention (77)' (filled): import {written}"
    assert "1 student of the gradebook is not in the Canvas export (matched by SIS Login ID): 'zed' (28)" in proc.stderr
    ours = {row[3]: float(row[5]) for row in _table(written.read_text())[2:]}
    theirs = {row["student_id"]: float(row["score"]) for row in export_rows(course, url)}
    assert ours == {s: theirs[s] for s in ours}
    assert ours == {"ada": 28.0, "bob": 27.5, "cy": 18.0, "di": 28.5, "eve": 0.0}


def test_the_export_has_nbgrader_export_s_totals_after_manual_grades_and_late_penalties(tmp_path):
    course = make_class(tmp_path, students=[])
    url = f"sqlite:///{course / 'gradebook.db'}"
    lms_class(url, course)
    check_canvas_export(course, url, tmp_path)


def test_the_export_command_says_what_is_wrong_in_one_line(tmp_path):
    course = make_class(tmp_path, students=[])
    proc = subprocess.run([sys.executable, "-m", "autograder", "export", "--canvas", str(tmp_path / "none.csv"),
                           "--course", str(course)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stderr.startswith("error: cannot read the Canvas export")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_score_already_in_the_lms_column_that_is_replaced_is_said():
    """Grace's 3.00 in Canvas (typed there by a person) becomes the gradebook's 20: a note says so; a blank, the
    same number or Moodle's '-' is no loss and is not noted."""
    notes = " ".join(merge_canvas(CANVAS, TOTALS, column="ch04_attention").notes)
    assert "1 score already in the Canvas column was replaced by the gradebook's: 'Hopper, Grace' ('3.00' -> 20)" \
        in notes and "Lovelace" not in notes.split("replaced")[1]
    same = merge_canvas(CANVAS.replace(",3.00,-1.50", ",20.00,-1.50"), TOTALS, column="ch04_attention")
    assert not any("replaced" in n for n in same.notes)
    assert not any("replaced" in n for n in merge_moodle(MOODLE, TOTALS, column="ch04_attention").notes)
