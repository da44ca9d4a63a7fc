"""Late submissions: nbgrader's own penalty classes on nbgrader's own gradebook, shown in every output."""
from dataclasses import replace
from datetime import datetime

import pytest

from autograder.course.view import course_settings
from autograder.run.batch import failed_record
from autograder.course.settings import load_course
from autograder.gradebook.lateness import Lateness, score
from autograder.outputs.csvout import csv_row
from autograder.outputs.feedback import feedback_html
from autograder.outputs.gradescope import results_json
from autograder.gradebook.latepenalties import LatePenalties
from autograder.outputs.report import report_html
from autograder.gradebook.timestamps import Submitted

pytestmark = pytest.mark.filterwarnings("ignore:.*not in session")      # nbgrader's own add_submission
PLUGIN = ("from nbgrader.plugins import BasePlugin\n\nclass Harsh(BasePlugin):\n"
          "    def late_submission_penalty(self, student_id, score, total_seconds_late):\n"
          "        print('a plugin that prints')\n        return 100.0\n")


def _course(tmp_path, config: str, plugin: str | None = PLUGIN):
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n" + config)
    if plugin:
        (tmp_path / "late.py").write_text(plugin)
    return load_course(tmp_path)


def _gradebook(tmp_path, submitted: datetime | None):
    from nbgrader.api import Gradebook

    from autograder.gradebook.nbgrader_api import stamp_new_sqlite
    stamp_new_sqlite(f"sqlite:///{tmp_path / 'gb.db'}")                  # no `alembic heads` process
    gb = Gradebook(f"sqlite:///{tmp_path / 'gb.db'}", "attention-course")
    gb.add_assignment("hw", duedate=datetime(2026, 11, 2, 12))
    for nb, points in (("one", 4.0), ("two", 6.0)):
        gb.add_notebook(nb, "hw")
        gb.add_grade_cell(f"{nb}_cell", nb, "hw", max_score=points, cell_type="code")
    gb.add_student("ada")
    submission = gb.add_submission("hw", "ada", timestamp=submitted)
    for notebook in submission.notebooks:
        notebook.grades[0].auto_score = 3.0
    gb.db.commit()
    return gb


def test_penalty_is_what_nbgrader_assigns_clamped_to_each_notebook(tmp_path):
    course = _course(tmp_path, "c.AssignLatePenalties.plugin_class = 'late.Harsh'\n")
    with _gradebook(tmp_path, datetime(2026, 11, 2, 13, 30)) as gb:
        late = LatePenalties(course).assign(gb, "hw", "ada")
    assert late == {"seconds_late": 5400.0, "due": "2026-11-02 12:00:00.000000 UTC", "penalties": {"one": 3.0, "two": 3.0},
                    "submitted": "2026-11-02 13:30:00.000000 UTC"}


@pytest.mark.parametrize("year", [1, 31, 999, 9999])
def test_a_submission_time_survives_the_gradebook(tmp_path, year):
    """A time written into nbgrader's gradebook (as the writer does) and written back out from it reads the
    same in nbgrader's parser: the gradebook leg of the round trip of every written time."""
    from nbgrader.utils import parse_utc

    from autograder.gradebook.scores import _submission
    from autograder.gradebook.timestamps import written_time
    at = datetime(year, 6, 15, 1, 2, 3, 4)
    course = _course(tmp_path, "", plugin=None)
    with _gradebook(tmp_path, None) as gb:
        _submission(gb, "hw", "ada", written_time(at))
        gb.db.commit()
        answer = LatePenalties(course).assign(gb, "hw", "ada")
    assert parse_utc(answer["submitted"]).replace(tzinfo=None) == at


def test_default_plugin_gives_no_penalty_and_on_time_loads_nothing(tmp_path):
    course = _course(tmp_path, "", plugin=None)
    with _gradebook(tmp_path, datetime(2026, 11, 2, 13)) as gb:
        penalties = LatePenalties(course)
        assert penalties.assign(gb, "hw", "ada")["penalties"] == {"one": 0.0, "two": 0.0}
        broken = LatePenalties(_course(tmp_path, "c.AssignLatePenalties.plugin_class = 'nowhere.Gone'\n"))
        gb.find_submission("hw", "ada").timestamp = datetime(2026, 11, 1)
        assert broken.assign(gb, "hw", "ada")["seconds_late"] == 0.0          # on time: the plugin is not loaded
        gb.find_submission("hw", "ada").timestamp = datetime(2026, 11, 3)
        with pytest.raises(RuntimeError, match="could not load the late-submission plugin 'nowhere.Gone'"):
            broken.assign(gb, "hw", "ada")


def test_a_plugin_set_as_code_is_refused_with_what_to_write(tmp_path):
    course = _course(tmp_path, "from late import Harsh\nc.AssignLatePenalties.plugin_class = Harsh\n")
    from autograder.gradebook.latepenalties import load_assigner
    with pytest.raises(RuntimeError, match="c.AssignLatePenalties.plugin_class .* not a plain value.*'late.SubMarks'"):
        load_assigner(course)


LATE = Lateness("2026-11-02 14:00:00.000000 UTC", "2026-11-02 12:00:00", 7200.0,
                {"ex1_attention": 2.0, "ex2_causal_mask": 2.0})


def _scoring(record, total: int):
    """``record`` with checks passed (first to last, skipping any that would overshoot) up to ``total``."""
    checks, earned = [], 0
    for c in record.checks:
        take = earned + c.max_points <= total
        earned += c.max_points if take else 0
        checks.append(replace(c, points=c.max_points, passed=True) if take else c)
    record = replace(record, checks=checks)
    assert record.total == total
    return record


def test_every_output_shows_the_late_score_and_why():
    record = _scoring(failed_record("ada", "x"), 20)
    assert score(20, LATE) == 16.0 and score(3, LATE) == 0.0 and score(20, None) == 20.0
    row = csv_row(record, LATE)
    assert (row["total"], row["seconds_late"], row["late_penalty"], row["submitted"]) == (
        "16", "7200", "4", "2026-11-02 14:00:00.000000 UTC")
    assert "Total: 16 / 28" in feedback_html(record, LATE) and "2 h after the due date" in feedback_html(record, LATE)
    assert results_json(record, LATE)["score"] == 16.0 and "late penalty 4 points" in results_json(record, LATE)["output"]
    report = report_html([record], "hw", {"ada": LATE})
    assert "2 h after the due date" in report and "mean 16.0" in report


def test_an_unreadable_timestamp_is_a_note_not_a_penalty():
    note = Lateness.from_gradebook(None, Submitted(note="timestamp.txt is empty; lateness was not checked"))
    record = failed_record("bob", "x")
    assert note.penalty == 0.0 and csv_row(record, note)["submitted"] == ""
    assert "timestamp.txt is empty" in report_html([record], "hw", {"bob": note})
    assert "timestamp.txt is empty" in feedback_html(record, note)


def test_a_plugin_that_cannot_load_is_named_with_what_is_wrong(tmp_path):
    from autograder.gradebook.latepenalties import check_plugin
    course = _course(tmp_path, "c.AssignLatePenalties.plugin_class = 'late.Nope'\n")
    with pytest.raises(ValueError) as caught:
        check_plugin(course)
    assert str(caught.value) == (
        f"could not load the late-submission plugin 'late.Nope' named in {tmp_path}/nbgrader_config.py "
        f"(c.AssignLatePenalties.plugin_class): module late ({tmp_path}/late.py) has no Nope; fix the setting "
        "(module.Class, the module in the course folder) and grade again")
    check_plugin(_course(tmp_path, "c.AssignLatePenalties.plugin_class = 'late.Harsh'\n"))      # loads: no error


def test_a_batch_with_a_plugin_that_cannot_load_stops_before_grading_or_writing(tmp_path):
    from autograder.run.batch import grade_batch
    from batch_helpers import make_class
    course = make_class(tmp_path, students=["correct-1"])
    (course / "late.py").write_text(PLUGIN)
    with open(course / "nbgrader_config.py", "a") as config:
        config.write("\nc.AssignLatePenalties.plugin_class = 'late.Nope'\n")
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=r"plugin 'late.Nope' .* module late \(.*late.py\) has no Nope"):
        grade_batch(course=course, out=out, workers=1, progress=False)
    assert not out.exists() or not any(out.rglob("*.csv")) and not any(out.rglob("*.json"))
    assert not (course / "gradebook.db").exists()


def test_a_gradebook_that_fails_leaves_lateness_unknown_never_no_penalty(tmp_path):
    from autograder.outputs.write import write_outputs
    from autograder.records import OutputError
    from batch_helpers import read_csv

    class Failing:
        def finish(self, records, submitted=None, fresh=None):
            raise OutputError("could not update the gradebook: the plugin raised")

    (tmp_path / "submitted" / "ada" / "hw").mkdir(parents=True)
    (tmp_path / "submitted" / "ada" / "hw" / "timestamp.txt").write_text("2026-11-02 17:00:00.000000 UTC")
    record = failed_record("ada", "stands for a graded submission")
    errors = write_outputs(tmp_path / "out", [record], settings=course_settings(tmp_path), assignment="hw",
                           gradebook=Failing()).errors
    assert any("could not update the gradebook" in e for e in errors)
    row = read_csv(tmp_path / "out" / "grades.csv")[0]
    assert row["seconds_late"] == row["late_penalty"] == "unknown"
    page = (tmp_path / "out" / "feedback" / "ada" / "index.html").read_text()
    assert "lateness unknown: the gradebook could not be updated" in page


def test_a_gradebook_that_fails_keeps_the_outputs_that_show_a_persons_work(tmp_path):
    """A run whose gradebook could not be written (a re-weighted cell, a server down) rewrote every page without
    the manual score and comment a person had given, with lateness "unknown": the earlier run's are kept."""
    from autograder.gradebook.messages import Answer
    from autograder.outputs.write import KEPT, write_outputs
    from autograder.records import CheckResult, OutputError, Record

    class Answering:
        def finish(self, records, submitted=None, fresh=None):
            return {"ada": Answer(manual={"ex1_attention": 1.0}, needs_manual_grade=False,
                                  comments=(("ex1_attention", "ex1_attention", "See me about the scaling."),))}

    class Failing:
        def finish(self, records, submitted=None, fresh=None):
            raise OutputError("could not update the gradebook: ex2_causal scores 8 over its maximum 6")

    (tmp_path / "submitted" / "ada" / "hw").mkdir(parents=True)
    record = Record("ada", [CheckResult("ex1_attention", "shapes", "correctness", 3, 3, True, "ok")])
    out, settings = tmp_path / "out", course_settings(tmp_path)
    assert write_outputs(out, [record], settings=settings, assignment="hw", gradebook=Answering()).errors == []
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert b"See me about the scaling." in before[out / "feedback/ada/index.html"]
    errors = write_outputs(out, [record], settings=settings, assignment="hw", gradebook=Failing()).errors
    assert errors[-1] == KEPT and "over its maximum" in errors[0]
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("late, shown", [
    (Lateness(unknown="lateness unknown: the gradebook could not be updated"),
     "lateness unknown: the gradebook could not be updated"),
    (Lateness(note="submission time unknown: timestamp.txt is damaged"),
     "submission time unknown: timestamp.txt is damaged"),
])
def test_the_pages_nbgrader_delivers_never_hide_why_lateness_is_unknown(late, shown):
    """The per-notebook pages (what release_feedback hands out) say what the whole page says."""
    from autograder.outputs.nbfeedback import notebook_html
    from autograder.records import CheckResult, Record
    record = Record("ada", [CheckResult("ex1_softmax", "rows_sum_to_one", "correctness", 2, 2, True, "ok")])
    page = notebook_html(record, "ex1_attention", late)
    assert shown in page and "Score: 2 / 2" in page


@pytest.mark.parametrize("earned, why", [({"one_cell": 3.0, "three_cell": 1.0}, "no grade cell 'three_cell'"),
                                         ({"one_cell": 5.0}, "one_cell scores 5 over its maximum 4")])
def test_a_gradebook_that_cannot_hold_the_scores_gets_none_and_says_why(tmp_path, earned, why):
    """A gradebook whose grade cells are missing (an autograde that found no notebooks left empty
    submissions) or smaller than the rubric's (points raised without generate_assignment --force) would
    silently hold zeros or scores over the maximum: the writer writes nothing and says what to do."""
    from autograder.gradebook.messages import Scores
    from autograder.gradebook.scores import write_scores
    course = _course(tmp_path, "")
    with _gradebook(tmp_path, datetime(2026, 11, 2, 11)) as gb:
        with pytest.raises(SystemExit, match=f"{why}.*generate_assignment hw --force"):
            write_scores(gb, "hw", [Scores("ada", earned)], LatePenalties(course))
        gb.db.rollback()
        assert [g.auto_score for nb in gb.find_submission("hw", "ada").notebooks for g in nb.grades] == [3.0, 3.0]


def test_a_late_page_says_what_came_off_in_words_and_times_to_the_second():
    """'no late penalty; on this notebook 0 points' read as 0 points; a due date showed '.000000'."""
    from autograder.outputs.nbfeedback import notebook_html
    from autograder.records import CheckResult, Record
    record = Record("ada", [CheckResult("ex1_attention", "shapes", "correctness", 1, 1, True, "ok")])
    free = Lateness("2026-11-02 14:00:00.000000 UTC", "2026-11-02 12:00:00.000000 UTC", 7200.0, {})
    page = notebook_html(record, "ex1_attention", free)
    assert "nothing off this notebook" in page and "0 points" not in page and ".000000" not in page
    assert "due date 2026-11-02 12:00:00 UTC" in page
    costly = Lateness("2026-11-02 14:00:00 UTC", "2026-11-02 12:00:00 UTC", 7200.0, {"ex1_attention": 1.0})
    assert "1 point off this notebook" in notebook_html(record, "ex1_attention", costly)


def test_a_score_below_the_maximum_never_reads_every_check_passes_bare():
    """'Score 0 / 1' then 'Every check passes': the page says what took the points (lateness, a person)."""
    from dataclasses import replace

    from autograder.outputs.feedback import feedback_html
    from autograder.outputs.nbfeedback import notebook_html
    from autograder.records import CheckResult, Record
    record = Record("ada", [CheckResult("ex1_attention", "shapes", "correctness", 1, 1, True, "ok")])
    assert "Every check passes." in notebook_html(record, "ex1_attention", None)
    costly = Lateness("2026-11-02 14:00:00 UTC", "2026-11-02 12:00:00 UTC", 7200.0, {"ex1_attention": 1.0})
    for page in (notebook_html(record, "ex1_attention", costly), feedback_html(record, costly)):
        assert "Every check passes." not in page
        assert "Every automatic check passes; the score is below the maximum for 1 point off for lateness" in page
    graded = notebook_html(replace(record, manual={"ex1_attention": 0.5}), "ex1_attention", None)
    assert "Score: 0.5 / 1" in graded and "below the maximum for your grader&#x27;s score, below" in graded


def test_a_process_that_graded_another_course_uses_this_courses_plugin(tmp_path):
    """Two courses, each with its own late.py, in one process (formgrader's, or a test run): the second's
    penalty is its own plugin's, not the module the first left loaded under the same name."""
    other = tmp_path / "other"
    other.mkdir()
    lenient = PLUGIN.replace("return 100.0", "return 0.0")
    with _gradebook(other, datetime(2026, 11, 2, 13, 30)) as gb:
        assert LatePenalties(_course(other, "c.AssignLatePenalties.plugin_class = 'late.Harsh'\n",
                                     lenient)).assign(gb, "hw", "ada")["penalties"] == {"one": 0.0, "two": 0.0}
    course = tmp_path / "course"
    course.mkdir()
    with _gradebook(course, datetime(2026, 11, 2, 13, 30)) as gb:
        late = LatePenalties(_course(course, "c.AssignLatePenalties.plugin_class = 'late.Harsh'\n")).assign(
            gb, "hw", "ada")
    assert late["penalties"] == {"one": 3.0, "two": 3.0}
