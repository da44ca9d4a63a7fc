"""A batch's pages in headless Chromium: the feedback page reads at a glance and the report renders, on a phone
too (the class of tests/run/test_batch.py, graded once a run)."""
import pytest

from batch_helpers import SMALL
from browser_helpers import FLAGS, browser
from conftest import ROOT


@pytest.fixture(scope="module")
def graded(graded_classes, tmp_path_factory):
    return graded_classes.copy(tmp_path_factory.mktemp("batch"), SMALL, workers=2)


PROBE = """() => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.top, r.width, r.height]; };
  const all = q => Array.from(document.querySelectorAll(q));
  const summary = document.querySelector('#summary');
  return {svgs: all('svg').map(box), images: document.images.length,
          tips: all('svg rect > title').map(t => t.textContent), texts: all('svg text').map(t => t.textContent),
          summaryTop: summary ? box(summary)[0] : null, sections: all('h2').map(h => h.textContent)};
}"""


def _render(out, page_path):
    """Open a page in headless Chromium; what PROBE sees, and every console or page error."""
    sync_api, chromium = browser()
    artifacts = ROOT / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as p:
        chrome = p.chromium.launch(executable_path=chromium, args=FLAGS)
        page = chrome.new_page(viewport={"width": 1000, "height": 900})
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto((out / page_path).as_uri())
        seen = page.evaluate(PROBE)
        page.screenshot(path=str(artifacts / (page_path.replace("/", "_") + ".png")), full_page=True)
        page.set_viewport_size({"width": 420, "height": 900})                     # a phone
        seen["phone"] = page.evaluate("() => document.documentElement.scrollWidth")
        page.screenshot(path=str(artifacts / (page_path.replace("/", "_") + "-420.png")), full_page=True)
        chrome.close()
    assert errors == []
    assert seen["images"] == 0 and seen["svgs"] and all(w > 0 and h > 0 for _, w, h in seen["svgs"])
    assert seen["phone"] <= 420, f"{page_path} is {seen['phone']} px wide at a phone's 420 px"
    return seen


def test_feedback_page_reads_at_a_glance_in_chromium(graded):
    """Summary in the first screen; heatmaps inline with a tooltip per cell, tick labels and a NaN legend."""
    seen = _render(graded[1], "feedback/mask-after-softmax/index.html")
    assert seen["summaryTop"] is not None and seen["summaryTop"] < 900
    assert any(t.startswith("row 0, column 0: ") for t in seen["tips"])
    assert {"0", "1", "NaN", "query position i"} <= set(seen["texts"])


def test_report_renders_in_chromium(graded):
    seen = _render(graded[1], "report.html")
    assert any(t.endswith("%") for t in seen["texts"]) and seen["tips"]
    assert "Failures with no diagnosis" in seen["sections"]
