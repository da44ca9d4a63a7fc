"""Manual grading through a real formgrader (`jupyter server` with nbgrader's extension on 127.0.0.1):
after `grade`, a score and a comment entered through formgrader's own API are kept by `grade --resume`,
never flagged again, and reach grades.csv (equal to `nbgrader export`) and the student's pages."""
import json
import urllib.request

import pytest

from autograder.__main__ import main
from batch_helpers import export_gradebook, make_class, read_csv
from browser_helpers import FLAGS, browser
from conftest import ROOT
from formgrader_helpers import TOKEN, formgrader

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore:.*not in session")]
A = "ch04_attention"


def _put(server, path: str, body: dict) -> dict:
    request = urllib.request.Request(f"{server.base}/formgrader/api/{path}", data=json.dumps(body).encode(),
                                     method="PUT", headers={"Authorization": f"token {TOKEN}",
                                                            "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.loads(reply.read())


def _notebook_of(server, student: str, notebook: str) -> dict:
    return next(s for s in server.api(f"submitted_notebooks/{A}/{notebook}") if s["student"] == student)


# What an instructor sees of a flagged notebook in formgrader's page: the note at the top (its words, whether
# any of it runs past the panel's edge, as the checks' lines under each grade cell did), the cells that ask for a score, and the placeholder of a comment box.
SEEN = """() => {
  const note = [...document.querySelectorAll('.text_cell_render')].find(e => e.innerText.includes('for review'));
  const clipped = e => e.scrollWidth > e.clientWidth + 1;          // text that runs on past what is shown
  return {note: note.innerText, clipped: [note, ...note.querySelectorAll('*')].filter(clipped).length,
          cut: [...document.querySelectorAll('.output_stream pre')].filter(clipped).length,
          scored: [...document.querySelectorAll('input.score')].map(e => e.id),
          placeholder: (document.querySelector('textarea.comment') || {}).placeholder};
}"""


def _formgrader_page(server, submission_id: str) -> dict:
    """The flagged notebook's formgrader page in headless Chromium, at a laptop's 1000 px (a screenshot in
    test-artifacts/), once its grades and comments have loaded."""
    sync_api, chromium = browser()
    with sync_api.sync_playwright() as p:
        chrome = p.chromium.launch(executable_path=chromium, args=FLAGS)
        page = chrome.new_page(viewport={"width": 1000, "height": 900},
                               extra_http_headers={"Authorization": f"token {TOKEN}"})     # (its API calls too)
        page.goto(f"{server.base}/formgrader/submissions/{submission_id}/")
        page.wait_for_function("() => [...document.querySelectorAll('textarea.comment')].some(t => t.placeholder)")
        seen = page.evaluate(SEEN)
        (ROOT / "test-artifacts").mkdir(exist_ok=True)
        page.screenshot(path=str(ROOT / "test-artifacts/formgrader-flagged-notebook.png"), full_page=True)
        chrome.close()
    return seen


def test_a_score_and_comment_entered_in_formgrader_are_kept_and_shown(tmp_path):
    course = make_class(tmp_path, ["damaged-missing-notebook", "no-scaling"])
    assert main(["grade", "--course", str(course), "--workers", "2"]) == 0
    with formgrader(course, tmp_path) as server:
        flagged = _notebook_of(server, "damaged-missing-notebook", "ex3_memory")
        assert flagged["needs_manual_grade"]
        seen = _formgrader_page(server, flagged["id"])          # the reason in full, within the panel, wrapped
        assert "ex3_memory.ipynb is missing" in seen["note"] and seen["clipped"] == 0, seen
        assert seen["cut"] == 0, seen                                           # nor a check's line, below
        assert sorted(seen["scored"]) == ["ex3_crossover", "ex3_memory"]          # no score asked of a visible test
        assert "the note at the top of the notebook keeps it" in seen["placeholder"]
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
