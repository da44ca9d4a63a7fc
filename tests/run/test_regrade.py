"""Regrades keep the class whole and current, and a person's work in the gradebook is the instructor's:
a resubmission is regraded by --resume, --student rewrites every class output from all current records,
and a manual score or comment set as formgrader sets it is kept, never re-flagged and shown everywhere."""
import csv
import shutil

import pytest

from autograder.__main__ import main
from autograder.run.batch import grade_batch
from autograder.samples import sample_class
from autograder.samples.synthetic import write_submission
from batch_helpers import export_gradebook, make_class, read_csv

pytestmark = pytest.mark.filterwarnings("ignore:.*not in session")
A = "ch04_attention"
CLASS = ["correct-1", "no-scaling", "damaged-missing-notebook"]


def _resubmit(course, student: str, like: str, when: str) -> None:
    """What `nbgrader collect --update` leaves: the student's folder replaced by newer work."""
    folder = course / "submitted" / student / A
    shutil.rmtree(folder)
    write_submission(course / "release" / A, course / "source" / A, folder, sample_class.students()[like])
    (folder / "timestamp.txt").write_text(when)


def _grades(course, student: str):
    from nbgrader.api import Gradebook
    gb = Gradebook(f"sqlite:///{course / 'gradebook.db'}", "attention-course")
    return gb, {g.name: g for nb in gb.find_submission(A, student).notebooks for g in nb.grades}


def _graded(graded_classes, tmp_path):
    """CLASS graded into the course's own grading/ (once a run, copied: tests/helpers/graded_classes.py)."""
    course, _ = graded_classes.copy(tmp_path, CLASS, out=None, workers=2)
    return course


def test_resume_regrades_a_resubmission_and_says_how_many(graded_classes, tmp_path, capsys):
    course = _graded(graded_classes, tmp_path)
    before = {r["student_id"]: r["total"] for r in read_csv(course / "grading" / "grades.csv")}
    assert before["no-scaling"] == "26"
    _resubmit(course, "no-scaling", "correct-1", "2026-11-30 12:00:00.000000 UTC")
    capsys.readouterr()
    assert main(["grade", "--course", str(course), "--workers", "2", "--resume"]) == 0
    printed = capsys.readouterr()
    out = printed.out
    assert "1 submission changed since graded" in out and "'no-scaling'" in out and "graded 1, skipped 2" in out
    # the progress line counts the kept, flagged damaged-missing-notebook, as the summary does
    assert "3/3 graded, 1 flagged for review" in printed.err and "1 needs review" in out
    rows = {r["student_id"]: r for r in read_csv(course / "grading" / "grades.csv")}
    assert rows["no-scaling"]["total"] == "28" and rows["no-scaling"]["diagnoses"] == ""
    assert rows["no-scaling"]["submitted"].startswith("2026-11-30 12:00:00")
    assert export_gradebook(course)["no-scaling"] == 28.0
    (course / "submitted" / "correct-1" / A / "timestamp.txt").write_text("2026-11-30 13:00:00.000000 UTC")
    result = grade_batch(course=course, workers=1, progress=False, resume=True)
    assert result.changed == ["correct-1"] and result.graded == ["correct-1"]     # a new time alone counts


def test_student_option_rewrites_every_class_output_from_all_records(graded_classes, tmp_path, capsys):
    course = _graded(graded_classes, tmp_path)
    out = course / "grading"
    _resubmit(course, "no-scaling", "correct-1", "")
    _resubmit(course, "correct-1", "no-scaling", "")
    capsys.readouterr()
    assert main(["grade", "--course", str(course), "--workers", "1", "--student", "no-scaling"]) == 0
    printed = capsys.readouterr()
    rows = {r["student_id"]: r["total"] for r in read_csv(out / "grades.csv")}
    assert rows == {"correct-1": "28", "damaged-missing-notebook": "22", "no-scaling": "28"}   # the whole class
    assert all(f">{s}<" in (out / "report.html").read_text() for s in CLASS)
    assert all(s in printed.out for s in CLASS) and "3 submissions graded" in printed.out
    assert "graded 1, skipped 0 already complete; 2 other students from their records" in printed.out
    assert "'correct-1' resubmitted since graded" in printed.err           # others' stale work is named
    assert export_gradebook(course) == {"correct-1": 28.0, "damaged-missing-notebook": 22.0, "no-scaling": 28.0}


def test_manual_scores_and_comments_are_kept_never_reflagged_and_shown(tmp_path):
    course = make_class(tmp_path, CLASS)
    (course / "submitted" / "no-scaling" / A / "submission_secret.txt").write_text("5ec2e7" * 6)   # as collected
    grade_batch(course=course, workers=2, progress=False)
    gb, grades = _grades(course, "damaged-missing-notebook")
    flagged = sorted(g for g, grade in grades.items() if grade.needs_manual_grade)
    assert flagged
    for name in flagged:                              # what formgrader's GradeHandler.put does
        grades[name].manual_score = grades[name].max_score if name.startswith("ex3") else grades[name].auto_score
        grades[name].needs_manual_grade = False
    bob = _grades_of(gb, "no-scaling")
    bob_auto, bob_max = bob["ex1_attention"].auto_score, bob["ex1_attention"].max_score
    bob["ex1_attention"].manual_score, bob["ex1_attention"].needs_manual_grade = bob_auto + 1, False
    ex1 = next(nb for nb in gb.find_submission(A, "no-scaling").notebooks if nb.name == "ex1_attention")
    ex1.comments[0].manual_comment = "Scale <the> scores by sqrt(d_k)."
    gb.db.commit()
    gb.close()

    for resume in (True, False):                      # --resume grades nothing; a full regrade grades all
        result = grade_batch(course=course, workers=2, progress=False, resume=resume)
        gb, grades = _grades(course, "damaged-missing-notebook")
        assert not any(g.needs_manual_grade for g in grades.values())        # never flagged again
        assert [grades[n].manual_score for n in flagged if n.startswith("ex3")] == [1.0 * grades[n].max_score
                                                                                     for n in flagged if n.startswith("ex3")]
        assert _grades_of(gb, "no-scaling")["ex1_attention"].manual_score == bob_auto + 1
        gb.close()
        rows = {r["student_id"]: r for r in read_csv(course / "grading" / "grades.csv")}
        exported = export_gradebook(course)
        assert {s: float(r["total"]) for s, r in rows.items()} == exported
        assert exported["no-scaling"] == 26 + 1 and rows["damaged-missing-notebook"]["needs_review"] == "false"
        by = {r.student_id: r for r in result.records}
        assert by["no-scaling"].total == 27 and by["damaged-missing-notebook"].reviewed
        assert "damaged-missing-notebook" not in _review_column(result)
    comment = "Scale &lt;the&gt; scores by sqrt(d_k)."
    page = (course / "grading" / "feedback" / "no-scaling" / "index.html").read_text()
    assert comment in page and f"ex1_attention: {bob_auto + 1:g}/{bob_max:g} given by your grader" in page
    assert comment in (course / "feedback" / "no-scaling" / A / "ex1_attention.html").read_text()
    assert comment not in (course / "feedback" / "no-scaling" / A / "ex2_causal_mask.html").read_text()


def test_a_resubmission_after_manual_grading_tells_the_instructor_to_look_again(tmp_path, capsys):
    """A person scored no-scaling's ex1_attention by hand (the old work); the student resubmits correct work:
    the score given by hand is kept and still counts, and the run says so, naming the cell and what the
    checks now give (the instructor would otherwise never learn that a stale score stands on new work)."""
    course = make_class(tmp_path, ["no-scaling", "correct-1"])
    grade_batch(course=course, workers=1, progress=False)
    gb, grades = _grades(course, "no-scaling")
    grades["ex1_attention"].manual_score, grades["ex1_attention"].needs_manual_grade = 4.0, False
    gb.db.commit()
    gb.close()
    _resubmit(course, "no-scaling", "correct-1", "2026-11-30 12:00:00.000000 UTC")
    capsys.readouterr()
    assert main(["grade", "--course", str(course), "--workers", "1", "--resume"]) == 0
    out, err = capsys.readouterr()
    assert ("note: 'no-scaling' resubmitted after a person scored ex1_attention (4 by hand; the checks now give "
            "5 of 5): the score given by hand still counts") in err
    assert "correct-1" not in err and export_gradebook(course)["no-scaling"] == 27.0
    _flagged_for_other_work(course, "no-scaling")                 # formgrader asks the person to look again
    _counted_for_review(course, out + err, "no-scaling")                # and every summary counts it, as formgrader does
    assert main(["grade", "--course", str(course), "--workers", "1", "--resume"]) == 0
    assert "resubmitted after a person scored" not in capsys.readouterr().err     # said once, when regraded
    _flagged_for_other_work(course, "no-scaling")                 # and the flag stays until the person saves
    assert main(["check", str(course / "submitted" / "no-scaling" / A)]) == 0      # the table says the gradebook's
    table = capsys.readouterr().out
    assert "total 28/28" in table and ("gradebook: a person scored ex1_attention 4 (the checks give 5 of 5); grade, "
                                       "formgrader and nbgrader export count the person's score: total 27/28") in table
    gb, grades = _grades(course, "no-scaling")
    grades["ex1_attention"].needs_manual_grade = False            # the person looked again (formgrader's save)
    gb.db.commit()
    gb.close()
    _resubmit(course, "no-scaling", "no-scaling", "2026-11-29 12:00:00.000000 UTC")   # collect --before-duedate
    assert main(["grade", "--course", str(course), "--workers", "1"]) == 0            # a plain grade, too
    _flagged_for_other_work(course, "no-scaling")


def _counted_for_review(course, terminal: str, student: str) -> None:
    """The terminal's summary, grades.csv and the report count a cell a person must look at again as formgrader
    does (they counted one student fewer: the checks of the new work need no review)."""
    rows = {r["student_id"]: r for r in csv.DictReader((course / "grading" / "grades.csv").open())}
    assert rows[student]["needs_review"] == "true" and rows["correct-1"]["needs_review"] == "false"
    report = (course / "grading" / "report.html").read_text()
    assert "1 need review" in report and "waits for them again in the gradebook" in report
    line = next(line for line in terminal.splitlines() if line.startswith(student + " "))
    assert "yes" in line.split(), terminal


def _flagged_for_other_work(course, student: str) -> None:
    """The cell a person scored is flagged for them, with why, and keeps their score."""
    gb, grades = _grades(course, student)
    try:
        assert grades["ex1_attention"].needs_manual_grade and grades["ex1_attention"].manual_score == 4.0
        comments = [c.auto_comment or "" for c in gb.find_submission_notebook("ex1_attention", A, student).comments]
        assert comments and all("handed in other work since a person scored ex1_attention" in c for c in comments)
        assert not any(g.needs_manual_grade for name, g in grades.items() if name != "ex1_attention")
    finally:
        gb.close()


def _review_column(result) -> list[str]:
    from autograder.textreport import summary_table
    return [line.split()[0] for line in summary_table(result.records, result.late).splitlines()[1:-2]
            if " yes " in line]


def _grades_of(gb, student: str) -> dict:
    return {g.name: g for nb in gb.find_submission(A, student).notebooks for g in nb.grades}
