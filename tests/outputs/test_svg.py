"""Inline SVG charts: well-formed, a working tooltip per cell and bar, axis ticks, a NaN legend."""
import math
import xml.etree.ElementTree as ET

from autograder.outputs import svg

NS = "{http://www.w3.org/2000/svg}"


def _parse(markup):
    root = ET.fromstring(markup)          # well-formed XML: every text was escaped
    return root, [t.text for t in root.iter(f"{NS}title")], [t.text for t in root.iter(f"{NS}text")]


def test_heatmap_cells_have_tooltips_ticks_and_a_nan_legend():
    student = [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [None, float("nan"), 0.25]]
    root, titles, texts = _parse(svg.heatmaps(student, [[1, 0, 0], [0.5, 0.5, 0], [0.3, 0.3, 0.4]], "ex2"))
    assert "row 2, column 2: 0.25" in titles and "row 2, column 0: NaN" in titles and "row 1, column 0: 0.5" in titles
    assert len([t for t in titles if t.startswith("row ")]) == 18
    assert {"0", "1", "2"} <= set(texts) and "NaN" in texts and "query position i" in texts
    grey = [r for r in root.iter(f"{NS}rect") if r.get("fill") == svg.NAN_COLOR]
    assert len(grey) == 3                     # two NaN cells and the legend's swatch


def test_student_text_in_a_matrix_is_drawn_as_nan_never_written():
    markup = svg.heatmaps([["<script>x</script>", True], [1e308 * 10, 0.5]], [[1, 0], [0.5, 0.5]], "t <b>")
    _, titles, _ = _parse(markup)
    assert "<script" not in markup and "<b>" not in markup
    assert "row 0, column 0: NaN" in titles and "row 0, column 1: NaN" in titles


def test_large_matrices_label_about_ten_ticks():
    n = 64
    _, _, texts = _parse(svg.heatmaps([[1 / n] * n] * n, [[1 / n] * n] * n, "big"))
    assert "63" not in texts and "7" not in texts and "60" in texts and "10" in texts


def test_bars_are_labelled_with_their_unit_and_tooltips():
    _, titles, texts = _parse(svg.bars(["ex2: rows", "ex1: shape"], [62.6, 12.0], "Failure rate", "% failing", "%"))
    assert "63%" in texts and "12%" in texts and "ex2: rows: 63%" in titles


def test_colour_scale():
    assert svg.color(0.0) == "#440154" and svg.color(1.0) == "#fde725"
    assert svg.color(math.nan) == svg.color(None) == svg.color("x") == svg.color(math.inf) == svg.NAN_COLOR
