"""Source and release notebooks: metadata, content, stored facts, release in sync with source."""
import json

import nbformat
import pytest

from autograder.course.release import generate_release
from autograder.assignment import NOTEBOOKS as RUBRIC_NOTEBOOKS
from autograder.grading.rubric import cell_max, max_total
from conftest import NOTEBOOKS, RELEASE, ROOT, SOURCE


def _cells(path):
    return nbformat.read(path, as_version=4).cells


def _meta(cell):
    return cell.metadata.get("nbgrader", {})


def _text(path):
    return "\n".join(c.source for c in _cells(path))


def _outputs(path):
    out = []
    for c in _cells(path):
        for o in c.get("outputs", []):
            out.append(o.get("text", "") + json.dumps(o.get("data", {}).get("text/plain", "")))
    return "\n".join(out)


def test_four_notebooks_each_side():
    assert sorted(p.stem for p in SOURCE.glob("*.ipynb")) == NOTEBOOKS
    assert sorted(p.stem for p in RELEASE.glob("*.ipynb")) == NOTEBOOKS
    assert sorted(RUBRIC_NOTEBOOKS) == NOTEBOOKS


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_grade_cells_match_rubric(name):
    graded = {_meta(c)["grade_id"]: _meta(c)["points"] for c in _cells(SOURCE / f"{name}.ipynb")
              if _meta(c).get("grade") and _meta(c)["points"] > 0}
    assert graded == {g: cell_max(g) for g in RUBRIC_NOTEBOOKS[name]}
    for c in _cells(SOURCE / f"{name}.ipynb"):
        m = _meta(c)
        if m.get("grade"):
            assert m["locked"] and not m["solution"]
            assert m["grade_id"].startswith(name[:3])


def test_documented_total():
    total = sum(_meta(c).get("points", 0) for n in NOTEBOOKS for c in _cells(SOURCE / f"{n}.ipynb")
                if _meta(c).get("grade"))
    assert total == max_total() == 28
    assert "28 points" in (ROOT / "README.md").read_text()
    assert "**28 points**" in (ROOT / "docs" / "reference" / "rubric.md").read_text()


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_release_has_stubs_visible_tests_and_no_answers(name):
    text = _text(RELEASE / f"{name}.ipynb")
    assert "raise NotImplementedError" in text
    assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text
    assert "grade_cell" not in text and "autograder" not in text      # hidden tests removed
    assert "Visible tests" in text and "assert " in text
    blocks = [b.split("### END SOLUTION")[0] for b in _text(SOURCE / f"{name}.ipynb").split("### BEGIN SOLUTION")[1:]]
    solution_lines = [ln.strip() for b in blocks for ln in b.splitlines() if len(ln.strip()) > 12]
    assert solution_lines and not any(ln in text for ln in solution_lines)
    assert all(not c.get("outputs") for c in _cells(RELEASE / f"{name}.ipynb") if c.cell_type == "code")


def test_visible_tests_use_numpy_only():
    for name in NOTEBOOKS:
        for c in _cells(RELEASE / f"{name}.ipynb"):
            if c.cell_type == "code":
                imports = [ln for ln in c.source.splitlines() if ln.startswith(("import", "from"))]
                assert all(("numpy" in ln or "matplotlib" in ln) for ln in imports), imports


@pytest.mark.parametrize("name, facts", [
    ("ex1_attention", ["0.9251", "0.5213", "1.0000", "0.7216", "2.8", "7.7", "23.4", "70.0", "22.6",
                       "row sums of the scaled weights: [1. 1. 1. 1. 1. 1.]"]),
    ("ex2_causal_mask", ["[[1.    0.    0.    0.    0.   ]\n [0.218 0.782 0.    0.    0.   ]\n"
                         " [0.571 0.342 0.087 0.    0.   ]\n [0.032 0.717 0.192 0.059 0.   ]\n"
                         " [0.516 0.063 0.1   0.127 0.195]]"]),      # the whole 5 x 5 table, its zeros too
    ("ex3_memory", ["8.59", "2.15", "4.00", "16384", "268,435,456"]),
    ("ex4_cross_attention", ["output: (4, 8)  weights: (4, 6)"]),
])
def test_chapter_facts_in_stored_outputs(name, facts):
    outputs = _outputs(SOURCE / f"{name}.ipynb")
    assert all(f in outputs for f in facts), [f for f in facts if f not in outputs]


def test_plots_stored():
    for name in NOTEBOOKS:
        images = [o for c in _cells(SOURCE / f"{name}.ipynb") for o in c.get("outputs", [])
                  if "image/png" in o.get("data", {})]
        assert images, name


def _normalise(path):
    cells = []
    for c in _cells(path):
        meta = {k: v for k, v in _meta(c).items()}
        cells.append((c.cell_type, c.source, json.dumps(meta, sort_keys=True)))
    return cells


def test_release_in_sync_with_source(tmp_path):
    fresh = generate_release(ROOT, dest=tmp_path / "release")
    for name in NOTEBOOKS:
        assert _normalise(fresh / f"{name}.ipynb") == _normalise(RELEASE / f"{name}.ipynb"), (
            f"release/{name}.ipynb is out of date: run `make release`")


def test_stored_stream_outputs_are_merged():
    """A print split into two messages by the kernel's timing is stored as one output."""
    from nbformat.v4 import new_output
    from autograder.course.release import merge_streams
    parts = [new_output("stream", name="stdout", text="  d_k"), new_output("stream", name="stdout", text="\n  8\n"),
             new_output("stream", name="stderr", text="w\n"), new_output("stream", name="stdout", text="x\n")]
    merged = merge_streams(parts)
    assert [(o["name"], o["text"]) for o in merged] == [("stdout", "  d_k\n  8\n"), ("stderr", "w\n"), ("stdout", "x\n")]
