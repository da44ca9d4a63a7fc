"""The chapter's explore widget (ex2, section 2d): sliders for d_k and a causal toggle where a person can
move them, one static plot everywhere else; it never runs, waits or times out under a grader.

A cell of the notebook decides (``someone_can_move_sliders``): a Jupyter frontend runs cells with input
allowed, while nbclient (nbval, ``make release``, nbgrader's autograde) runs them with allow_stdin=False,
our sandbox has no kernel at all, and without ipywidgets there are no sliders."""
from __future__ import annotations

import sys
import time
import types

import matplotlib
import nbformat
import numpy as np
import pytest

import solutions as S
from conftest import RELEASE, SOURCE

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

WIDGET_ID = "ex2_explore_widget"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def _cell(path):
    nb = nbformat.read(path, as_version=4)
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == WIDGET_ID)


def _run_cell(get_ipython=None, **functions):
    """The widget cell run in-process; what it drew or displayed."""
    shown, interacted = [], []
    ns = {"np": np, "plt": plt, "softmax": S.softmax, "causal_mask": S.causal_mask, **functions}
    if get_ipython is not None:
        ns["get_ipython"] = get_ipython
    show, plt.show = plt.show, lambda: (shown.append(plt.gcf().get_suptitle()), plt.close("all"))
    try:
        exec(_cell(SOURCE / "ex2_causal_mask.ipynb").source, ns)     # noqa: S102 - our own notebook
    finally:
        plt.show = show
    return shown, interacted


def _kernel(allow_stdin: bool):
    parent = {"content": {"allow_stdin": allow_stdin}}
    kernel = types.SimpleNamespace(get_parent=lambda: parent)
    return lambda: types.SimpleNamespace(kernel=kernel)


@pytest.fixture
def interact(monkeypatch):
    """ipywidgets.interact, recorded instead of displayed (the decision is what is tested here)."""
    import ipywidgets
    calls = []
    monkeypatch.setattr(ipywidgets, "interact", lambda fn, **controls: calls.append(sorted(controls)))
    return calls


def test_static_plot_without_a_kernel_as_in_the_sandbox_or_a_script(interact):
    assert _run_cell()[0] == ["d_k = 8, causal mask"] and interact == []
    no_kernel = lambda: types.SimpleNamespace()            # noqa: E731 - IPython's plain shell, as the worker has
    assert _run_cell(no_kernel)[0] == ["d_k = 8, causal mask"] and interact == []


def test_static_plot_where_cells_run_without_input_as_nbclient_nbval_and_nbgrader_run_them(interact):
    assert _run_cell(_kernel(allow_stdin=False))[0] == ["d_k = 8, causal mask"] and interact == []


def test_sliders_where_a_person_runs_the_cell(interact):
    assert _run_cell(_kernel(allow_stdin=True))[0] == [] and interact == [["causal", "d_k"]]


def test_static_plot_where_ipywidgets_is_not_installed(interact, monkeypatch):
    monkeypatch.setitem(sys.modules, "ipywidgets", None)             # import ipywidgets raises ImportError
    assert _run_cell(_kernel(allow_stdin=True))[0] == ["d_k = 8, causal mask"] and interact == []


def test_an_unfinished_notebook_gets_a_line_not_a_traceback(capsys):
    def stub(*args, **kwargs):
        raise NotImplementedError()
    assert _run_cell(softmax=stub)[0] == []
    assert "Write softmax and causal_mask above to see the example." in capsys.readouterr().out


def test_stored_output_is_the_static_plot_and_the_release_has_none():
    outputs = _cell(SOURCE / "ex2_causal_mask.ipynb").outputs
    assert [o.output_type for o in outputs] == ["display_data"] and "image/png" in outputs[0].data
    assert not any(WIDGET_MIME in o.get("data", {}) for o in outputs)
    assert "widgets" not in nbformat.read(SOURCE / "ex2_causal_mask.ipynb", as_version=4).metadata
    assert _cell(RELEASE / "ex2_causal_mask.ipynb").outputs == []


def test_the_sandbox_runs_the_widget_cell_quietly(server, tmp_path):
    """In the sandboxed worker (IPython without a kernel) the cell draws its static plot: no error in the
    notes, nothing waits, and the notebook is graded in full."""
    from autograder.run.hardened import grade_submission
    from autograder.samples.synthetic import write_submission
    from conftest import ROOT
    folder = write_submission(RELEASE, SOURCE, tmp_path / "submitted" / "ada" / "ch04_attention", {},
                              skip=("ex1_attention", "ex3_memory", "ex4_cross_attention"))
    start = time.monotonic()
    record = grade_submission(folder / "ex2_causal_mask.ipynb", course=ROOT, server=server)
    assert time.monotonic() - start < 60
    assert record.notes == () and record.notebooks["ex2_causal_mask"].earned == 9
    assert "Write softmax" not in record.output
