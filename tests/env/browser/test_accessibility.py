"""Every page we write, as a person who cannot see it or use a mouse meets it (issue 38, minor): axe-core (from
the npm registry, `make axe`) run in Debian's Chromium finds no violation (none serious or critical); each chart
says what its data say (alt text computed from the values, not a title) and has its data as a table beside
it; a heatmap's values are in that table, not only in hover tooltips; the page has a <main> landmark; no
chart text is smaller than 12 px."""
import json
import re
import xml.etree.ElementTree as ET

import pytest

from autograder.gradebook.lateness import Lateness
from autograder.outputs.feedback import feedback_html
from autograder.outputs.nbfeedback import notebook_html
from autograder.outputs.report import report_html
from autograder.records import CheckResult, Finding, Record
from autograder.watch.pages import closed_page, feedback_page, limit_page, unknown_notebook_page
from autograder.watch.limits import Limit
from browser_helpers import FLAGS, browser
from conftest import ROOT

AXE = ROOT / ".axe-core" / "node_modules" / "axe-core" / "axe.min.js"
SVG = "{http://www.w3.org/2000/svg}"
WEIGHTS = [[1.0, 0.0, 0.0], [0.3, 0.7, 0.0], [0.2, 0.5, 0.3]]
LEAKED = [[0.5, 0.25, 0.25], [0.3, 0.4, 0.3], [0.2, 0.5, 0.3]]


def _record(student: str, wrong: bool) -> Record:
    checks = [CheckResult("ex1_attention", "shapes", "correctness", 1, 1, True, "ok"),
              CheckResult("ex2_causal", "no_future_leakage", "masking", 0 if wrong else 2, 2, not wrong,
                          "Row 0 puts weight 0.25 on position 2, which is in its future: add the mask first."
                          if wrong else "ok", "future-visible" if wrong else None,
                          details={"student_weights": LEAKED, "expected_weights": WEIGHTS} if wrong else {}),
              CheckResult("ex3_memory", "exact", "memory", 1, 1, True, "ok")]
    return Record(student, checks, assignment="ch04_attention", needs_review=wrong,
                  findings=(Finding("ex3_memory.ipynb is missing; nothing in it was graded.", "ex3_memory"),)
                  if wrong else (), output="print output\n")


def pages() -> dict[str, str]:
    wrong, right = _record("ada", True), _record("bob", False)
    late = Lateness("2026-11-02 14:00:00 UTC", "2026-11-02 12:00:00 UTC", 7200.0, {"ex2_causal_mask": 1.0})
    return {"feedback index": feedback_html(wrong, late),
            "report": report_html([wrong, right, _record("cy", True)], "ch04_attention", {"ada": late}),
            "nbgrader notebook page": notebook_html(wrong, "ex2_causal_mask", late),
            "watch full": feedback_page(wrong, "ex2_causal_mask", "full", 0.0),
            "watch diagnosis": feedback_page(wrong, "ex2_causal_mask", "diagnosis", 0.0),
            "watch visible": feedback_page(wrong, "ex2_causal_mask", "visible", 0.0),
            "watch limit": limit_page("ada", "ex2_causal_mask", 0.0, 3600.0, Limit(5, "day")),
            "watch closed": closed_page("ada", "ex2_causal_mask", 0.0, "2026-12-01 17:00 UTC"),
            "watch unknown notebook": unknown_notebook_page("ada", "notes", 0.0)}


def _charts(html: str) -> list[ET.Element]:
    return [ET.fromstring(m) for m in re.findall(r"<svg .*?</svg>", html, re.S)]


def test_each_chart_says_what_its_data_say_and_has_its_data_as_a_table_beside_it():
    made = pages()
    for name, html in made.items():
        assert "<main>" in html and "</main>" in html, name
        for chart in _charts(html):
            label = chart.get("aria-label")
            assert chart.get("role") == "img" and label and any(ch.isdigit() for ch in label), (name, label)
            sizes = [float(t.get("font-size")) for t in chart.iter(f"{SVG}text")] + [float(chart.get("font-size"))]
            assert min(sizes) >= 12, (name, min(sizes))
        assert html.count("<svg ") == html.count('class="chart-data"'), name        # a table beside each chart
    heatmap = made["feedback index"]
    assert "future-visible" in heatmap and "hover a cell" not in heatmap
    data = heatmap.split('class="chart-data"')[1].split("</details>")[0]
    assert all(f"{v:.4g}" in data for row in LEAKED for v in row)                # every value, not only on hover
    label = _charts(heatmap)[0].get("aria-label")
    assert "3 by 3" in label and "above the diagonal" in label, label           # what the pattern is, in words


def test_axe_finds_no_violation_on_any_page(tmp_path):
    """None serious or critical, as the issue asks, and none moderate either: the pages had no <main>
    landmark (axe's landmark-one-main and region)."""
    if not AXE.exists():
        pytest.fail("axe-core is missing: `make axe` installs it from the npm registry into .axe-core/")
    sync_api, chromium = browser()
    found = {}
    with sync_api.sync_playwright() as p:
        chrome = p.chromium.launch(executable_path=chromium, args=FLAGS)
        page = chrome.new_page(viewport={"width": 1000, "height": 900})
        for name, html in pages().items():
            path = tmp_path / (re.sub(r"\W+", "-", name) + ".html")
            path.write_text(html)
            page.goto(path.as_uri())
            page.add_script_tag(path=str(AXE))
            result = page.evaluate("async () => JSON.stringify(await axe.run(document, {resultTypes: ['violations']}))")
            bad = [(v["id"], v["impact"], len(v["nodes"])) for v in json.loads(result)["violations"]]
            if bad:
                found[name] = bad
        chrome.close()
    assert found == {}
