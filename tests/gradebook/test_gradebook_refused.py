"""One student's rows can fail only that student's rows: what nbgrader's gradebook refuses (an id longer than
its VARCHAR(128), text that is not UTF-8, a NUL, a score that is not a number) is refused before it is written,
on SQLite as on PostgreSQL (tests/env/postgres/test_gradebook_refused.py runs the same class there), with one
line per student, and the rest of the class is written; what no check foresaw is isolated to its student."""
import pytest

from autograder.gradebook import schema
from autograder.gradebook.messages import Answer, Scores
from autograder.gradebook.nbgrader_api import nbgrader_api
from refused_rows import (FULL, FITS, HONEST, LATE, NOT_UTF8, REFUSED, assert_only_refused_left_out, in_gradebook,
                          late_plugin, the_class, write_class)

pytestmark = [pytest.mark.filterwarnings("ignore:.*not in session")]


def test_the_limits_are_nbgrader_s_own():
    """Read from nbgrader's models, not typed here: a model with a longer column moves the limit with it."""
    api = nbgrader_api()
    assert schema.Limits.of(api).student_id == api.Student.__table__.c.id.type.length == 128


def test_refused_ids_in_the_middle_of_a_class_cost_only_their_own_rows_on_sqlite(tmp_path):
    url = f"sqlite:///{tmp_path / 'gb.db'}"
    answer = write_class(url, the_class())
    written = in_gradebook(url)
    assert_only_refused_left_out(answer, written, REFUSED)
    assert set(FITS) | set(HONEST) <= set(written)                  # 128 characters of any width fit


def test_what_no_check_foresaw_is_isolated_to_its_student(tmp_path, monkeypatch):
    """With the checks before writing taken away, the database's own refusal (SQLite cannot hold text that is
    not UTF-8) still fails only that student's row: the batch is written again one student at a time."""
    monkeypatch.setattr("autograder.gradebook.scores.refusal", lambda s, limits: None)
    url = f"sqlite:///{tmp_path / 'gb.db'}"
    scores = [Scores(s, FULL, submitted=LATE) for s in ["ann", "bob", NOT_UTF8, "cid", "dee", "eve"]]
    answer = write_class(url, scores)
    assert_only_refused_left_out(answer, in_gradebook(url), {NOT_UTF8: "UnicodeEncodeError"})


def test_an_instructor_s_late_plugin_that_fails_for_one_student_costs_that_student_only(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    late_plugin(course, fails_for="cid")
    url = f"sqlite:///{tmp_path / 'gb.db'}"
    answer = write_class(url, [Scores(s, FULL, submitted=LATE) for s in HONEST], course)
    assert_only_refused_left_out(answer, in_gradebook(url), {"cid": "no penalty table for cid"})
    assert all(answer[s].penalties == {nb: 1.0 for nb in answer[s].penalties} for s in HONEST if s != "cid")


def test_the_refusal_crosses_the_writer_s_pipe():
    answer = Answer(refused="the student id 'x' is too long")
    assert Answer.from_dict(answer.to_dict()) == answer and "refused" not in Answer().to_dict()


def test_text_for_the_gradebook_holds_no_nul_and_no_undecodable_byte():
    assert schema.storable("a\x00b\udcff") == "a\\x00b\\udcff" and schema.storable("plain \u00e9") == "plain \u00e9"


def test_a_review_reason_reaches_formgrader_s_comment_inert(tmp_path):
    """The reason a notebook needs a person is its answer cells' auto comment, which formgrader shows as it is: a
    student's file name there holds no bidi override, escape sequence or NUL."""
    url = f"sqlite:///{tmp_path / 'gb.db'}"
    reason = "the file \u202eevil\u202c\x1b[8m.ipynb\x00 could not be read"
    write_class(url, [Scores("ann", FULL, {"ex1_attention": (reason,)}, submitted=LATE)])
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        comments = [c.auto_comment for nb in gb.find_submission("ch04_attention", "ann").notebooks
                    for c in nb.comments if nb.name == "ex1_attention"]
    assert comments and all("\\u202eevil\\u202c\\x1b[8m.ipynb\\x00" in c for c in comments)
    assert not any(ch in c for c in comments for ch in "\u202e\u202c\x1b\x00")
