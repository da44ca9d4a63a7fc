"""Feedback and report read at a glance: a summary first, advice once per cell, sorted and labelled
rates, and the failures no catalogue entry explains."""
import re
from dataclasses import replace

from autograder.outputs.advice import deduplicated, sentences
from autograder.outputs.classstats import failure_rates, undiagnosed
from autograder.outputs.feedback import feedback_html
from autograder.outputs.report import report_html
from autograder.records import CheckResult, Finding, Record

CAUSE = "It looks like the mask is applied after the softmax, so rows no longer sum to 1; add the mask first."


def _check(grade_id, check, points, passed, message="ok", diagnosis=None):
    return CheckResult(grade_id, check, "masking", points if passed else 0, points, passed, message, diagnosis)


def _mask_after_softmax(student="ann"):
    return Record(student, [
        _check("ex1_attention", "shapes", 1, True),
        _check("ex2_causal", "matches_engine", 2, False, f"The weights differ from the expected values. {CAUSE}",
               "mask-after-softmax"),
        _check("ex2_causal", "no_future_leakage", 1, False, f"Position 2 sees its future. {CAUSE}",
               "mask-after-softmax"),
        _check("ex2_causal", "rows_sum_to_one", 1, False, f"Row 0 of the weights sums to 0.313. {CAUSE}",
               "mask-after-softmax"),
        _check("ex4_cross", "shapes", 1, False, "The output has shape (4, 6); it should be (4, 8)."),
    ])


def test_sentences_split_at_sentence_ends_only():
    assert sentences("Row 0 sums to 0.313; fix it. Then e.g. 1.5 is fine. Done") == [
        "Row 0 sums to 0.313; fix it.", "Then e.g. 1.5 is fine.", "Done"]


def test_each_piece_of_advice_once_per_cell():
    record = _mask_after_softmax()
    advice = deduplicated(record.checks)
    assert advice[1].endswith(CAUSE) and CAUSE not in advice[2] and CAUSE not in advice[3]
    assert advice[2].startswith("Position 2 sees its future.") and "as above" in advice[2]
    assert advice[4] == "The output has shape (4, 6); it should be (4, 8)."
    table = feedback_html(record).split("<h2>Every check</h2>")[1]
    assert table.count("mask is applied after the softmax") == 1


def test_summary_comes_first_with_scores_per_notebook_and_the_main_problem():
    html = feedback_html(_mask_after_softmax())
    summary = html.split('<section id="summary">')[1].split("</section>")[0]
    assert html.index('id="summary"') < html.index("Every check")
    assert "Total: 1 / 6" in summary and "Start here:</strong> The weights differ" in summary
    rows = re.findall(r"<tr><td>(\w+)</td><td>(\d+/\d+)</td><td>(.*?)</td></tr>", summary)
    assert [(n, p) for n, p, _ in rows] == [("ex1_attention", "1/1"), ("ex2_causal_mask", "0/4"),
                                            ("ex4_cross_attention", "0/1")]
    assert "all checks pass" in rows[0][2] and "mask-after-softmax" in rows[1][2] and "(4, 6)" in rows[2][2]


def test_failure_rates_are_sorted_and_labelled_in_percent():
    records = [_mask_after_softmax("ann"), _mask_after_softmax("bob"),
               Record("cat", [_check("ex1_attention", "shapes", 1, True),
                              _check("ex2_causal", "matches_engine", 2, True)] +
                      [_check("ex2_causal", c, 1, False, "x") for c in ("no_future_leakage", "rows_sum_to_one")] +
                      [_check("ex4_cross", "shapes", 1, True)])]
    rates, clean = failure_rates(records)
    assert [r for _, r in rates] == sorted((r for _, r in rates), reverse=True) and clean == 1
    assert rates[0] == ("causal attention: no position sees its future", 100.0)
    html = report_html(records, "ch04_attention")
    labels = re.findall(r">(\d+)%</text>", html)
    assert labels == ["100", "100", "67", "67"]


def test_report_lists_the_failures_no_catalogue_entry_explains():
    odd = Record("dee", [_check("ex4_cross", "matches_engine", 2, False, "Your weights are a softmax of Q K^T "
                                "times 0.5, not times 1/sqrt(d_k).")])
    stub = Record("eve", [_check("ex4_cross", "matches_engine", 2, False, "raised NotImplementedError: stub")])
    review = Record("fay", [_check("ex4_cross", "shapes", 1, False, "odd")], needs_review=True)
    found = undiagnosed([_mask_after_softmax(), odd, stub, review])
    assert [(u.grade_id, u.check, u.students) for u in found] == [("ex4_cross", "shapes", ["ann"]),
                                                                  ("ex4_cross", "matches_engine", ["dee"])]
    html = report_html([_mask_after_softmax(), odd, stub, review], "ch04_attention")
    section = html.split("Failures with no diagnosis")[1].split("<h2>")[0]
    assert "dee" in section and "times 0.5" in section and "eve" not in section and "fay" not in section


def test_summary_table_lists_students_then_the_class():
    from autograder.textreport import summary_table
    full = Record("bob", [_check("ex1_attention", "shapes", 1, True)])
    lines = summary_table([_mask_after_softmax("ann\x1b[2J"), full]).splitlines()
    assert lines[0].split() == ["student", "total", "late", "review", "diagnoses"]
    assert lines[1].split() == ["ann\\x1b[2J", "1/6", "mask-after-softmax"]        # shown as it is, not as 'ann'
    assert lines[2].split() == ["bob", "1/1"]
    assert lines[-1] == "2 submissions graded: 1 full marks, 0 need review."


def test_summary_table_shows_totals_after_late_penalties_as_the_gradebook_does():
    from autograder.gradebook.lateness import Lateness
    from autograder.textreport import summary_table
    full = [Record(s, [_check("ex1_attention", "shapes", 4, True)]) for s in ("ann", "dee", "eve")]
    late = {"dee": Lateness("2026-12-02 10:00:00.000000 UTC", "2026-12-01 17:00:00", 61200.0, {"ex1_attention": 3.0}),
            "eve": Lateness(unknown="lateness unknown: the gradebook could not be updated")}
    lines = summary_table(full, late).splitlines()
    assert lines[1].split() == ["ann", "4/4"]
    assert lines[2].split() == ["dee", "1/4", "late", "-3"]          # what nbgrader export shows: 4 - 3
    assert lines[3].split() == ["eve", "4/4", "?"]
    assert lines[-1].startswith("3 submissions graded: 2 full marks, 0 need review, 2 late or of unknown")


def test_extra_credit_above_the_maximum_counts_as_full_marks():
    """A person's extra credit in formgrader (bob 1.5/1) is full marks in the table and the report."""
    from autograder.textreport import summary_table
    bob = Record("bob", [_check("ex1_attention", "shapes", 1, True)], manual={"ex1_attention": 1.5})
    assert summary_table([bob, _mask_after_softmax()]).splitlines()[-1].startswith("2 submissions graded: 1 full marks")
    assert "; 1 full marks;" in report_html([bob], "ch04_attention")


def test_notebook_pages_in_nbgrader_layout_start_with_the_main_problem():
    from autograder.outputs.nbfeedback import notebook_html
    html = notebook_html(_mask_after_softmax(), "ex2_causal_mask", None)
    assert html.index("Start here:</strong> The weights differ") < html.index("<table")
    assert html.count("mask is applied after the softmax") == 2          # the summary line and the table, once


def test_summary_table_columns_line_up_for_long_ids():
    from autograder.textreport import ID_WIDTH, summary_table
    ids = ["a", "compound-no-scaling-mask-after-softmax", "x" * 250]
    lines = summary_table([Record(i, [_check("ex1_attention", "shapes", 1, True)]) for i in ids]).splitlines()
    starts = {line.index("1/1") for line in lines[1:4]}
    assert len(starts) == 1 and starts.pop() <= ID_WIDTH + 8          # one column, long ids cut
    assert "compound-no-scaling-mask-after-softmax" in lines[2] and "x" * 250 not in lines[3]


def test_summary_table_lines_up_full_width_and_combining_names_in_a_terminals_columns():
    """A full-width character takes two columns of a terminal and a combining mark none: counted as one
    character each, they pushed the total out of its column."""
    from autograder.textreport import columns, summary_table
    ids = ["ann", "\u5c71\u7530\u592a\u90ce", "jose\u0301", "\u5c71" * 30]      # 山田太郎, josé, a long one
    lines = summary_table([Record(i, [_check("ex1_attention", "shapes", 1, True)]) for i in ids]).splitlines()
    rows = [line for line in lines[1:5]]
    assert len({columns(line[:line.index("1/1")]) for line in rows}) == 1, rows


SUSPECTED = "Integrity: ex2_causal_mask.ipynb is the same notebook as a classmate's; both must be reviewed."
DAMAGE = "ex3_memory.ipynb is missing; nothing in it was graded."


def _suspected(**kw):
    return Record("ann", [_check("ex2_mask", "values", 2, True), _check("ex3_memory", "exact", 1, False)],
                  needs_review=True, findings=[
                      Finding(SUSPECTED, "ex2_causal_mask",
                              "ex2_causal_mask.ipynb: the same notebook as classmate(s) 'zed-the-twin'.", accuses=True),
                      Finding(DAMAGE, "ex3_memory")], **kw)


def _student_pages(record) -> dict[str, str]:
    import json
    from autograder.outputs.gradescope import results_json
    from autograder.outputs.nbfeedback import notebook_html
    from autograder.watch.pages import feedback_page
    pages = {"index": feedback_html(record), "results.json": json.dumps(results_json(record))}
    for nb in ("ex2_causal_mask", "ex3_memory"):
        pages[nb] = notebook_html(record, nb, None)
        pages.update({f"watch {show} {nb}": feedback_page(record, nb, show, 0.0) for show in ("full", "diagnosis")})
    return pages


def test_what_the_grader_suspects_reaches_the_instructor_never_the_student():
    """A copy, link or tamper suspicion is the instructor's (report, terminal); a student's page says only
    that the notebook awaits review, with the reasons that accuse nobody, each on its own notebook's page."""
    import json
    from autograder.textreport import check_table
    record = _suspected()
    assert Record.from_json(json.dumps(record.to_dict())).findings == record.findings
    for name, page in _student_pages(record).items():
        assert "same notebook as" not in page and "zed-the-twin" not in page and "Integrity" not in page, name
        assert "awaits review" in page, name
    pages = _student_pages(record)
    assert "ex3_memory.ipynb is missing" in pages["ex3_memory"] and "is missing" not in pages["ex2_causal_mask"]
    report = report_html([record], "ch04_attention")
    assert "zed-the-twin" in report and "the same notebook as classmate(s)" in report    # the private line
    assert "the same notebook as classmate(s) 'zed-the-twin'" in check_table(record)   # `check`, the instructor's


def test_the_report_names_each_copied_notebook_once_and_each_check_in_words():
    """A copy was listed twice in a twin's row (the sentence a student may read one day, then the line naming
    the classmate), and the charts labelled checks with rubric ids (weights_and_output_match)."""
    import xml.etree.ElementTree as ET
    from autograder.grading.rubric import RUBRIC
    from autograder.intake.model import Intake
    from autograder.outputs import svg
    from autograder.textreport import check_table
    twins = []
    for me, other in (("ann", "bob"), ("bob", "ann")):
        intake = Intake()
        for nb in ("ex1_attention", "ex2_causal_mask"):         # as intake.integrity.twin_event words the pair
            intake.damage(f"Integrity: {nb}.ipynb is the same notebook as a classmate's; both must be reviewed.",
                          f"{nb}.ipynb: the same notebook as classmate(s) '{other}'.", suspicion=True)
        twins.append(Record(me, [_check("ex1_attention", "weights_and_output_match", 2, False, "off")],
                            needs_review=True, findings=intake.findings))
    html = report_html(twins, "ch04_attention")
    rows = re.findall(r"<tr><td><a[^>]*>(\w+)</a></td><td>[^<]*</td><td>(.*?)</td></tr>", html)
    assert [s for s, _ in rows] == ["ann", "bob"]
    for _student, why in rows:
        assert why.count("ex1_attention.ipynb") == why.count("ex2_causal_mask.ipynb") == 1, why
    assert check_table(twins[0]).count("ex1_attention.ipynb") == 1          # `check`'s terminal too
    chart = ET.fromstring("<svg" + html.split("<svg")[2].split("</svg>")[0] + "</svg>")
    labels = [t.text for t in chart.iter("{http://www.w3.org/2000/svg}text")]
    assert "attention: weights and output are right" in labels and not any("_" in t for t in labels)
    assert all(item.title for items in RUBRIC.values() for item in items)            # every check has words
    longest = max((i.title for items in RUBRIC.values() for i in items), key=len)
    left = float(ET.fromstring(svg.bars([longest], [50.0], "t", "x")).find("{http://www.w3.org/2000/svg}rect").get("x"))
    assert left >= svg.LABEL_PX * len(longest)                                 # the longest title fits its margin


def test_a_review_a_person_finished_leaves_no_trace_on_the_students_pages():
    from autograder.gradebook.messages import Answer
    from autograder.outputs.write import with_manual_work
    done = with_manual_work(_suspected(), Answer.from_dict({
        "manual": {"ex2_mask": 2.0}, "needs_manual_grade": False,
        "comments": [["ex2_causal_mask", "ex2_solution", "Discussed in office hours."]]}))
    for name, page in _student_pages(done).items():
        assert "awaits review" not in page and 'class="review"' not in page and "same notebook" not in page and "is missing" not in page, name
    assert "Discussed in office hours." in _student_pages(done)["index"]      # what the person wrote is shown


def test_a_graders_comment_names_the_cell_as_the_student_knows_it():
    """Comments were labelled with nbgrader's internal cell ids ('ex1_softmax_solution', 'cell-5e0c2a1f')."""
    from autograder.gradebook.messages import Answer
    from autograder.outputs.feedback import by_hand
    from autograder.outputs.write import with_manual_work
    done = with_manual_work(_suspected(), Answer.from_dict({"manual": {}, "needs_manual_grade": False, "comments": [
        ["ex2_causal_mask", "ex2_mask_solution", "Neat."], ["ex2_causal_mask", "ex2_causal", "See the note."],
        ["ex2_causal_mask", "cell-5e0c2a1f", "Good plot."]]}))
    said = by_hand(done, "ex2_causal_mask")
    assert "ex2_causal_mask.ipynb, your code for ex2_mask: Neat." in said
    assert "the tests of ex2_causal: See the note." in said and "a cell of the notebook: Good plot." in said
    assert "_solution" not in said and "cell-5e0c2a1f" not in said
    from autograder.outputs.gradescope import results_json
    assert "Comment on ex2_causal_mask.ipynb, your code for ex2_mask: Neat." in results_json(done)["output"]


def test_full_credit_a_person_confirmed_is_no_grade_given_by_your_grader():
    """formgrader's 'Full credit' on a cell the checks gave full marks read to the student as a grade
    'given by your grader'; a score a person changed still does."""
    from autograder.gradebook.messages import Answer
    from autograder.outputs.feedback import by_hand
    from autograder.outputs.gradescope import results_json
    from autograder.outputs.write import with_manual_work
    record = _suspected()
    full = {g: c.max for g, c in record.auto_cells.items() if c.earned == c.max}
    changed = next(g for g, c in record.auto_cells.items() if c.earned < c.max)
    done = with_manual_work(record, Answer.from_dict({"manual": full, "needs_manual_grade": False}))
    assert full and by_hand(done) == "" and "Your grader gave" not in results_json(done)["output"]
    done = with_manual_work(record, Answer.from_dict({"manual": {**full, changed: 0.5}, "needs_manual_grade": False}))
    assert by_hand(done).count("given by your grader") == 1 and f"{changed}: 0.5/" in by_hand(done)


def test_inline_code_in_messages_renders_as_code_and_student_text_stays_inert():
    from autograder.outputs.html import message
    assert message("Replace `raise NotImplementedError()` with your code") == \
        "Replace <code>raise NotImplementedError()</code> with your code"
    hostile = "`f` raised ValueError: `<script>alert(1)</script>` and a lone ` backtick & <b>"
    html = message(hostile)
    assert "<script>" not in html and "<b>" not in html
    assert html.startswith("<code>f</code> raised ValueError: <code>&lt;script&gt;")
    assert "lone ` backtick &amp; &lt;b&gt;" in html
    record = Record("ann", [_check("ex4_cross", "shapes", 1, False, "`cross_attention` is still the stub: "
                                   "replace `raise NotImplementedError()` with your code.")])
    page = feedback_html(record)
    assert "`" not in page.split('<section id="summary">')[1]
    assert page.count("<code>raise NotImplementedError()</code>") == 3      # start here, summary, every check


def test_a_persons_scores_count_everywhere_and_a_review_is_done_only_when_they_graded_it():
    from autograder.gradebook.messages import Answer
    from autograder.outputs.csvout import csv_row
    from autograder.outputs.write import with_manual_work
    from autograder.textreport import summary_table
    record = Record("ann", [_check("ex1_attention", "shapes", 4, False), _check("ex2_causal", "rows", 2, True)],
                    needs_review=True)
    unflagged = with_manual_work(record, Answer.from_dict({"manual": {}, "comments": [], "needs_manual_grade": False}))
    assert unflagged.open_review and not unflagged.reviewed           # nobody graded it: still to review
    graded = with_manual_work(record, Answer.from_dict({"manual": {"ex1_attention": 3.0, "elsewhere": 9.0},
                                                        "comments": [["ex1_attention", "ex1_solution", "close"]],
                                                        "needs_manual_grade": False}))
    assert graded.reviewed and not graded.open_review and graded.manual == {"ex1_attention": 3.0}
    assert (graded.total, graded.auto_total, graded.notebooks["ex1_attention"].earned) == (5, 2, 3)
    assert csv_row(graded)["total"] == "5" and csv_row(graded)["needs_review"] == "false"
    assert summary_table([graded]).splitlines()[1].split() == ["ann", "5/6"]
    assert with_manual_work(record, None) is record                   # the gradebook said nothing


def test_one_submission_and_one_point_are_said_in_the_singular():
    from autograder.textreport import summary_table
    assert summary_table([_mask_after_softmax()]).splitlines()[-1].startswith("1 submission graded: 0 full marks")


def test_only_the_flagged_notebooks_page_says_it_awaits_review():
    """One notebook flagged (ex3_memory missing) put "This notebook awaits review" on every notebook's page,
    after the deadline (nbgrader's pages) and before it (watch's), though a person had nothing to look at there."""
    from autograder.outputs.nbfeedback import notebook_html
    from autograder.watch.pages import feedback_page
    record = Record("ann", [_check("ex2_mask", "values", 2, True), _check("ex3_memory", "exact", 1, False)],
                    needs_review=True, findings=(Finding(DAMAGE, "ex3_memory"),))
    for notebook, waits in (("ex2_causal_mask", False), ("ex3_memory", True)):
        pages = [notebook_html(record, notebook, None),
                 *(feedback_page(record, notebook, show, 0.0) for show in ("full", "diagnosis"))]
        assert all(("awaits review" in page) == waits for page in pages), notebook
    assert "awaits review" in feedback_html(record)             # the whole submission's page: one notebook waits


def test_the_reports_review_counts_agree_with_its_sections_and_the_summary():
    """The report said "1 need review" above a section listing two students (one a person had graded since),
    and the progress line counted only this run's flags while the summary counted the class's."""
    import io

    from autograder.gradebook.messages import Answer
    from autograder.outputs.write import with_manual_work
    from autograder.run.progress import Progress
    from autograder.textreport import summary_table
    done = with_manual_work(_suspected(), Answer.from_dict({"manual": {"ex2_mask": 2.0}, "needs_manual_grade": False}))
    waiting = replace(_suspected(), student_id="bob")
    records = [done, waiting, _mask_after_softmax("cat")]
    html = report_html(records, "ch04_attention")
    assert "1 need review (1 more reviewed by hand)" in html
    sections = dict(re.findall(r"<h2>([^<(]+) \((\d+)\)</h2>", html))
    assert sections == {"Students needing review": "1", "Reviewed by hand": "1"}
    waiting_rows = html.split("Students needing review")[1].split("</table>")[0]
    assert "bob" in waiting_rows and ">ann<" not in waiting_rows
    assert summary_table(records).splitlines()[-1].startswith("3 submissions graded: 0 full marks, 1 needs review "
                                                              "(1 more reviewed by hand)")
    bar = Progress(3, done=2, failed=2, stream=io.StringIO())         # two kept by --resume, both flagged
    bar.advance()
    assert "3/3 graded, 2 flagged for review" in bar.line()            # = 1 needs review + 1 reviewed by hand
