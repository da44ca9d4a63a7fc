"""The notebooks' words: collapsed hints for every graded function, and text that is true."""
import re

import nbformat
import pytest

from autograder.samples.synthetic import reference_answers
from conftest import NOTEBOOKS, RELEASE, ROOT, SOURCE

SUMMARY = re.compile(r"<details><summary>Hint (\d)</summary>\n\n(.+?)\n\n</details>", re.S)


def _cells(folder, name):
    return nbformat.read(folder / f"{name}.ipynb", as_version=4).cells


def _meta(cell):
    return cell.metadata.get("nbgrader", {})


def _graded_solution_cells(name):
    """(index, cell) of each solution cell whose functions a grade cell of the notebook grades."""
    cells = _cells(RELEASE, name)
    graded = {_meta(c)["grade_id"] for c in cells if _meta(c).get("grade") and _meta(c).get("points")}
    return [(i, c) for i, c in enumerate(cells)
            if _meta(c).get("solution") and _meta(c)["grade_id"].removesuffix("_solution") in graded]


def _solution_lines(name):
    code = "\n".join(reference_answers(SOURCE)[name].values())
    return [ln.strip() for ln in code.splitlines()
            if len(ln.strip()) > 8 and not ln.strip().startswith(("#", '"""', "def "))]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_graded_function_has_two_or_three_collapsed_hints_in_the_release(name):
    solutions = _graded_solution_cells(name)
    assert solutions
    cells = _cells(RELEASE, name)
    for index, cell in solutions:
        hint_cell = cells[index - 1]
        assert hint_cell.cell_type == "markdown" and not _meta(hint_cell), (
            f"{name}: the cell before {_meta(cell)['grade_id']} should be a plain markdown cell of hints")
        hints = SUMMARY.findall(hint_cell.source)
        assert [int(n) for n, _ in hints] in ([1, 2], [1, 2, 3]), hint_cell.source
        assert hint_cell.source.count("<details") == len(hints) and "open" not in hint_cell.source
        for _, text in hints:
            assert "```" not in text and "    " not in text, f"hints are words, never code: {text}"
            assert not any(line in text for line in _solution_lines(name)), text


def test_hints_render_as_closed_details_elements():
    """nbconvert's markdown renderer keeps <details> as HTML, so the browser shows them closed;
    JupyterLab and Notebook 7 keep details and summary through their sanitizer too."""
    from nbconvert import HTMLExporter
    html, _ = HTMLExporter().from_notebook_node(nbformat.read(RELEASE / "ex2_causal_mask.ipynb", as_version=4))
    assert html.count("<details><summary>Hint 1</summary>") == 2
    assert "<details open" not in html and "&lt;details" not in html


def test_copy_your_softmax_says_the_notebook_uses_its_own_copy():
    for name in ("ex2_causal_mask", "ex4_cross_attention"):
        text = next(c.source for c in _cells(RELEASE, name) if c.source.startswith("Copy your `softmax`"))
        assert "runs on its own" in text and "defined here, not the one in exercise 1" in text


def test_masks_in_practice_matches_the_engine():
    """What the text says a fully masked row gets, with -1e9 and with the engine, is what happens."""
    import numpy as np

    import solutions as S
    text = next(c.source for c in _cells(SOURCE, "ex2_causal_mask") if "Masks in practice" in c.source)
    scores = np.array([[0.3, -1.2, 2.0]])
    assert np.allclose(S.softmax(np.full_like(scores, -1e9)), 1 / 3)        # -1e9 replaces: uniform
    assert np.allclose(S.softmax(scores - 1e9), S.softmax(scores))           # added: as if unmasked
    assert np.allclose(S.softmax(scores.astype(np.float32) - np.float32(1e9)), 1 / 3)   # float32
    assert np.allclose(S.softmax(scores - np.inf), 0)                        # the engine: zero weights
    assert "**uniform**" in text and "**without the mask**" in text and "**zero** weights" in text
    assert "zero weights" in (ROOT / "docs" / "reference" / "engine.md").read_text()


def test_memory_plot_labels_say_what_is_plotted():
    plot = next(c.source for c in _cells(SOURCE, "ex3_memory") if "set_ylabel" in c.source)
    assert "per layer and head" not in plot
    assert 'set_ylabel("memory in GB (fp16)")' in plot and "one head" in plot
