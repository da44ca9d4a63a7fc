"""A person decides what students are told about integrity (design rule 5), through nbgrader's real commands.

Two students hand in the same notebooks. The suspicion reaches the instructor (grades.csv, the report,
the comment formgrader shows) and never a student's page: ours, nor the pages nbgrader's generate_feedback
writes from the autograded notebooks, which say only that the notebook awaits review. Once a person has
graded the review in the gradebook (as formgrader saves it) and written a comment, the pages show that
comment and no trace of the flag; the classmate nobody has reviewed yet still awaits review."""
import shutil

from nbgrader_fast import run_nbgrader
from autograder.run.batch import grade_batch
from batch_helpers import make_class, read_csv

A = "ch04_attention"
SUSPICION = "same notebook as a classmate"
SAID = "We spoke: you worked on this together, which the syllabus allows."


def _nbgrader_pages(course) -> dict[str, dict[str, str]]:
    """student -> page name -> the page `nbgrader generate_feedback` writes."""
    run_nbgrader(["generate_feedback", A, "--force", "--log-level=WARN"], course, "generate_feedback")
    return {s: {p.name: p.read_text() for p in (course / "feedback" / s / A).glob("*.html")} for s in ("twin-a", "twin-b")}


def _review_by_hand(course, student: str) -> None:
    """What formgrader saves when a person scores every flagged cell and writes one comment."""
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for notebook in gb.find_submission(A, student).notebooks:
            for grade in notebook.grades:
                if grade.needs_manual_grade:
                    grade.manual_score, grade.needs_manual_grade = grade.auto_score, False
            if notebook.name == "ex2_causal_mask":
                notebook.comments[0].manual_comment = SAID
        gb.db.commit()


def test_a_suspicion_is_the_instructors_until_a_person_tells_the_student(tmp_path):
    course = make_class(tmp_path, ["mask-after-softmax", "no-scaling"])
    for student in ("twin-a", "twin-b"):                     # twin-b hands in twin-a's ex2, byte for byte
        shutil.copytree(course / "submitted/no-scaling", course / "submitted" / student)
    shutil.copy(course / f"submitted/mask-after-softmax/{A}/ex2_causal_mask.ipynb",
                course / f"submitted/twin-a/{A}/ex2_causal_mask.ipynb")
    shutil.copy(course / f"submitted/twin-a/{A}/ex2_causal_mask.ipynb", course / f"submitted/twin-b/{A}/")
    shutil.rmtree(course / "submitted/mask-after-softmax")
    grade_batch(course=course, assignment=A, workers=1, progress=False)
    rows = {r["student_id"]: r for r in read_csv(course / "grading/grades.csv")}
    assert rows["twin-a"]["needs_review"] == rows["twin-b"]["needs_review"] == "true"
    report = (course / "grading/report.html").read_text()
    assert SUSPICION not in report                            # each copy once, by the line naming the classmate:
    why = report.split("Students needing review")[1].split("</table>")[0].split("<tr>")[2:]
    assert len(why) == 3 and [row.count("ex2_causal_mask.ipynb") for row in why] == [0, 1, 1], why   # no-scaling,
    assert all(row.count(f"{nb}.ipynb") <= 1 for row in why for nb in ("ex1_attention", "ex4_cross_attention"))  # twins
    assert "the same notebook as classmate(s) &#x27;twin-b&#x27;" in why[1]     # (twin-a's row)
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:          # what formgrader shows beside the cells
        comments = [c.auto_comment or "" for nb in gb.find_submission(A, "twin-a").notebooks for c in nb.comments]
    assert any(SUSPICION in c for c in comments)
    assert SUSPICION in (course / f"autograded/twin-a/{A}/ex2_causal_mask.ipynb").read_text()   # formgrader's view

    ours = (course / "grading/feedback/twin-a/index.html").read_text()
    pages = _nbgrader_pages(course)["twin-a"]
    assert len(pages) == 4
    for name, page in {"index": ours, **pages}.items():
        assert SUSPICION not in page and "Integrity" not in page and "twin-b" not in page, name
    assert "awaits review" in ours and "awaits review" in pages["ex2_causal_mask.html"]
    assert "awaits review" not in pages["ex3_memory.html"]                  # (too little work to compare)

    _review_by_hand(course, "twin-a")
    grade_batch(course=course, assignment=A, workers=1, progress=False, resume=True)
    ours = (course / "grading/feedback/twin-a/index.html").read_text()
    everyone = _nbgrader_pages(course)
    pages = everyone["twin-a"]
    for name, page in {"index": ours, **pages}.items():
        assert "awaits review" not in page and SUSPICION not in page and "marked this notebook" not in page, name
    assert SAID in ours and SAID in pages["ex2_causal_mask.html"]
    assert "awaits review" in everyone["twin-b"]["ex2_causal_mask.html"]
    rows = {r["student_id"]: r for r in read_csv(course / "grading/grades.csv")}
    assert (rows["twin-a"]["needs_review"], rows["twin-b"]["needs_review"]) == ("false", "true")
