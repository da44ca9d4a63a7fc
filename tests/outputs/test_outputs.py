"""Output pages escape whatever the student wrote, and the charts are real images."""
from dataclasses import replace

from autograder.run.batch import failed_record
from autograder.outputs import svg
from autograder.outputs.feedback import feedback_html
from autograder.outputs.gradescope import results_json
from autograder.outputs.report import report_html


def _record():
    record = failed_record("s1", "grader trouble")
    weights = {"student_weights": [[1, 0], [0.5, 0.5]], "expected_weights": [[1, 0], [0.4, 0.6]]}
    return replace(record, output="<script>alert('x')</script>\x1b[31mred\x1b[0m",
                   notes=["Cell 3 raised ValueError: <img src=x onerror=alert(1)>"],
                   checks=[replace(record.checks[0], details=weights), *record.checks[1:]])


def test_feedback_escapes_student_text_and_draws_heatmaps():
    html = feedback_html(_record())
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert "<img src=x" not in html and "\x1b[" not in html
    svg_text = "<svg" + html.split("<svg", 1)[1].split("</svg>")[0] + "</svg>"
    assert svg_text.count("<rect") >= 8 and "data:image" not in html


def test_report_lists_review_and_results_json_sums():
    record = _record()
    html = report_html([record], "ch04_attention")
    assert "Students needing review" in html and "grader trouble" in html
    results = results_json(record)
    assert results["score"] == 0 and sum(t["max_score"] for t in results["tests"]) == 28


def test_viridis_endpoints():
    assert svg.color(0.0) == "#440154" and svg.color(1.0) == "#fde725" and svg.color(float("nan")) == "#bbbbbb"
