"""Manual grading through a real formgrader (`jupyter server` with nbgrader's extension on 127.0.0.1):
after `grade`, a score and a comment entered through formgrader's own API are kept by `grade --resume`,
never flagged again, and reach grades.csv (equal to `nbgrader export`) and the student's pages."""
import json
import urllib.request

import pytest

from autograder.__main__ import main
from batch_helpers import export_gradebook, make_class, read_csv
from formgrader_helpers import TOKEN, formgrader

pytestmark = pytest.mark.filterwarnings("ignore:.*not in session")
A = "ch04_attention"


def _put(server, path: str, body: dict) -> dict:
    request = urllib.request.Request(f"{server.base}/formgrader/api/{path}", data=json.dumps(body).encode(),
                                     method="PUT", headers={"Authorization": f"token {TOKEN}",
                                                            "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.loads(reply.read())


def _notebook_of(server, student: str, notebook: str) -> dict:
    return next(s for s in server.api(f"submitted_notebooks/{A}/{notebook}") if s["student"] == student)


def test_a_score_and_comment_entered_in_formgrader_are_kept_and_shown(tmp_path):
    course = make_class(tmp_path, ["damaged-missing-notebook", "no-scaling"])
    assert main(["grade", "--course", str(course), "--workers", "2"]) == 0
    with formgrader(course, tmp_path) as server:
        flagged = _notebook_of(server, "damaged-missing-notebook", "ex3_memory")
        assert flagged["needs_manual_grade"]
        for grade in server.api(f"grades?submission_id={flagged['id']}"):
            assert _put(server, f"grade/{grade['id']}", {"manual_score": grade["max_score"]})["needs_manual_grade"] is False
        ex1 = _notebook_of(server, "no-scaling", "ex1_attention")
        grade = next(g for g in server.api(f"grades?submission_id={ex1['id']}") if g["name"] == "ex1_attention")
        _put(server, f"grade/{grade['id']}", {"manual_score": grade["auto_score"] + 1})
        comment = server.api(f"comments?submission_id={ex1['id']}")[0]
        _put(server, f"comment/{comment['id']}", {"manual_comment": "Divide the scores by sqrt(d_k)."})

        assert main(["grade", "--course", str(course), "--workers", "2", "--resume"]) == 0
        assert not _notebook_of(server, "damaged-missing-notebook", "ex3_memory")["needs_manual_grade"]
        shown = {s["student"]: s for s in server.api(f"submissions/{A}")}
    rows = {r["student_id"]: r for r in read_csv(course / "grading" / "grades.csv")}
    assert {s: float(r["total"]) for s, r in rows.items()} == export_gradebook(course)
    assert {s: float(r["total"]) for s, r in rows.items()} == {s: shown[s]["score"] for s in rows}
    assert rows["no-scaling"]["total"] == "27" and rows["damaged-missing-notebook"]["needs_review"] == "false"
    for page in (course / "grading" / "feedback" / "no-scaling" / "index.html",      # (no secret: no nbgrader page)
                 course / "grading" / "results" / "no-scaling" / "results.json"):
        assert "Divide the scores by sqrt(d_k)." in page.read_text(), page
