"""A record's findings: one type read by every output (records.finding.Finding). Whether a problem accuses the
student is the finding's ``accuses``, never a match on its text, and records written before findings (their
problems as parallel lists) read as the same findings, so every output of them is as it was."""
from __future__ import annotations

import json
from pathlib import Path

from autograder.gradebook.client import review_flags
from autograder.outputs.autograded import review_notes
from autograder.outputs.feedback import feedback_html
from autograder.outputs.gradescope import results_json
from autograder.outputs.nbfeedback import notebook_html
from autograder.records import INTERNAL, CheckResult, Finding, Record
from autograder.records.finding import UNSAID
from autograder.textreport import check_table

OLD = Path(__file__).resolve().parents[1] / "fixtures" / "records"     # written by `grade` before findings
TWIN = "zed-the-twin"


def _copied(nb: str) -> str:
    return (f"Integrity: {nb}.ipynb is the same notebook as a classmate's (identical content, whatever its "
            "encoding); it was graded, but both must be reviewed.")


def test_a_record_written_before_findings_reads_as_its_findings():
    """Its lists (integrity, review, named, suspicions, flags) become one finding each: the notebook its flags
    gave it, the private line named for it, whether it was among the suspicions."""
    twin = Record.from_json((OLD / "twin-before-findings.json").read_text())
    assert twin.findings == tuple(Finding(_copied(nb), nb, f"{nb}.ipynb: the same notebook as classmate(s) '{TWIN}'.",
                                          accuses=True) for nb in ("ex1_attention", "ex2_causal_mask"))
    damaged = Record.from_json((OLD / "damaged-before-findings.json").read_text())
    missing = ("ex3_memory.ipynb is missing from the submission; the folder holds no other notebook. Its "
               "functions could not be graded.")
    assert damaged.findings == (Finding(missing, "ex3_memory"),)
    assert Record.from_json(twin.to_json()) == twin                 # written again: the findings themselves


def test_the_outputs_of_an_old_record_are_what_they_were():
    """What the pages and the gradebook said of these records before findings (read from the outputs of the
    code that wrote them): the suspicion is the instructor's, the damage is its notebook's."""
    twin = Record.from_json((OLD / "twin-before-findings.json").read_text())
    assert twin.for_instructor == [f"{nb}.ipynb: the same notebook as classmate(s) '{TWIN}'."
                                   for nb in ("ex1_attention", "ex2_causal_mask")]
    assert twin.told_student() == [] and all(twin.told_student(nb) == [] for nb in twin.notebooks)
    assert review_flags(twin) == {nb: [_copied(nb)] for nb in ("ex1_attention", "ex2_causal_mask")}
    assert len(review_notes(twin, "ex1_attention")) == 2 and review_notes(twin, "ex3_memory") == []
    pages = [feedback_html(twin), json.dumps(results_json(twin)), *(notebook_html(twin, nb, None) for nb in twin.notebooks)]
    assert "awaits review" in pages[0] and not any(TWIN in p or "Integrity" in p for p in pages)
    assert TWIN in check_table(twin)
    damaged = Record.from_json((OLD / "damaged-before-findings.json").read_text())
    assert damaged.told_student("ex3_memory") == damaged.told_student() == list(damaged.integrity)
    assert damaged.told_student("ex1_attention") == [] and list(review_flags(damaged)) == ["ex3_memory"]


def test_a_record_written_before_flags_gives_every_problem_to_every_notebook():
    written = json.loads((OLD / "damaged-before-findings.json").read_text())
    del written["flags"]
    older = Record.from_dict(written)
    assert [f.notebook for f in older.findings] == [""]
    assert older.review_reasons("ex1_attention") == older.review_reasons("ex4_cross_attention") == list(older.integrity)
    unsaid = Record.from_dict({**written, "integrity": [], "named": {}})
    assert unsaid.review_reasons("ex2_causal_mask") == [UNSAID]     # a review with no reason kept says so
    paired = {**written, "integrity": [], "review": ["a line naming 'bob'"], "named": {}}
    assert Record.from_dict(paired).for_instructor == ["a line naming 'bob'"]     # no private line is lost
    assert Record.from_dict(paired).told_student() == []


def test_whether_a_finding_accuses_is_its_own_not_its_texts():
    """Two findings with the same words, one a suspicion and one not: a page tells the one that does not
    accuse (a match on the text hid both, or would tell both)."""
    same = "ex2_causal_mask.ipynb could not be read as the class's other notebooks were."
    record = Record("ada", (), needs_review=True, findings=(Finding(same, "ex1_attention", accuses=True),
                                                             Finding(same, "ex2_causal_mask")))
    assert record.told_student("ex1_attention") == [] and record.told_student("ex2_causal_mask") == [same]
    assert record.told_student() == [same]
    suspected = [c["source"] for c in review_notes(record, "ex1_attention")]
    assert len(suspected) == 2 and same in suspected[1].replace("\\", "") and same not in suspected[0]


def test_a_check_the_grader_could_not_run_is_its_notebooks_finding():
    broken = CheckResult("ex1_softmax", "a", "correctness", 0, 1, False, INTERNAL, details={"internal_error": "tb"})
    record = Record("ada", (broken,), findings=(Finding("the folder is odd"),))
    assert record.review_findings("ex1_attention") == [Finding("the folder is odd"), Finding(INTERNAL, "ex1_attention")]
    assert record.review_reasons("ex2_causal_mask") == ["the folder is odd"]
