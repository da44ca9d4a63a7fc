"""One student's rows can fail only that student's rows, on a real PostgreSQL server, which enforces what
SQLite does not (nbgrader's VARCHAR(128) ids, no NUL in text): the class of tests/gradebook/test_gradebook_refused.py
written there gives the same answer, the database's own refusal is isolated to its student when no check caught
it, and ``grade`` of a class with a 140-character id writes every honest classmate, with one line for that id."""
import pytest

from autograder.gradebook.messages import Scores
from batch_helpers import export_gradebook, make_class, read_csv
from refused_rows import (FITS, FULL, HONEST, LATE, REFUSED, assert_only_refused_left_out, in_gradebook,
                          late_plugin, the_class, write_class)
from test_gradebook_postgres import on_database

pytestmark = [pytest.mark.filterwarnings("ignore:.*not in session")]


def test_refused_ids_in_the_middle_of_a_class_cost_only_their_own_rows_on_postgres(postgres):
    url = postgres.create_database("refused_ids")
    answer = write_class(url, the_class())
    written = in_gradebook(url)
    assert_only_refused_left_out(answer, written, REFUSED)
    assert set(FITS) | set(HONEST) <= set(written)


def test_postgres_s_own_refusal_is_isolated_to_its_student(postgres, monkeypatch):
    """With the checks before writing taken away, PostgreSQL refuses the over-long id and the NUL itself,
    inside a batch: only those students are left out, each with the database's reason."""
    monkeypatch.setattr("autograder.gradebook.scores.refusal", lambda s, limits: None)
    url = postgres.create_database("refused_by_server")
    ids = ["ann", "c" * 140, "bob", "cid", "nul\x00id", "dee", "eve"]
    answer = write_class(url, [Scores(s, FULL, submitted=LATE) for s in ids])
    assert_only_refused_left_out(answer, in_gradebook(url), {"c" * 140: "varying(128)", "nul\x00id": "NUL"})


def test_an_instructor_s_late_plugin_that_fails_for_one_student_costs_that_student_only(postgres, tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    late_plugin(course, fails_for="cid")
    url = postgres.create_database("refused_plugin")
    answer = write_class(url, [Scores(s, FULL, submitted=LATE) for s in HONEST], course)
    assert_only_refused_left_out(answer, in_gradebook(url), {"cid": "no penalty table for cid"})


def test_grade_on_postgres_writes_every_classmate_of_a_140_character_id(postgres, tmp_path):
    from autograder.run.batch import grade_batch
    long_id = "s" * 140
    honest = ["correct-1", "no-scaling", "mask-after-softmax", "correct-einsum", "crossover-off-by-one",
              "cross-causal-mask"]
    course = make_class(tmp_path, honest[:3], custom={long_id: {}, **{s: {} for s in ("x-ann", "x-bob")}})
    course_more = make_class(tmp_path / "more", honest[3:])
    for folder in (course_more / "submitted").iterdir():
        folder.rename(course / "submitted" / folder.name)
    url = postgres.create_database("refused_grade")
    on_database(course, url)
    result = grade_batch(course=course, workers=2, progress=False)
    [error] = result.errors                                    # said once, in words
    assert "140 characters long" in error and "at most 128" in error and "grades.csv" in error
    assert sorted(in_gradebook(url)) == sorted([*honest, "x-ann", "x-bob"])
    assert sorted(export_gradebook(course)) == sorted([*honest, "x-ann", "x-bob"])      # nbgrader's own export
    rows = {r["student_id"]: r for r in read_csv(course / "grading" / "grades.csv")}
    assert set(rows) == {*honest, "x-ann", "x-bob", long_id}
    assert "lateness unknown" in str(result.late[long_id].describe()) and not result.late["x-ann"].unknown
