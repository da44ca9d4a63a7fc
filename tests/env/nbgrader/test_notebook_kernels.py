"""The source notebooks in real Jupyter kernels (nbclient's, as nbgrader and `make release` run them): the stored
outputs are what running them makes, and the explore widget's cell (tests/notebooks/test_widget.py) shows
sliders only where input is allowed."""
import time

import nbformat

from conftest import SOURCE

WIDGET_ID = "ex2_explore_widget"                        # as tests/notebooks/test_widget.py
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def _cell(path):
    nb = nbformat.read(path, as_version=4)
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == WIDGET_ID)


def test_stored_outputs_are_current(tmp_path):
    """`make release` re-runs the sources; doing so now must reproduce the committed outputs exactly."""
    import shutil
    from autograder.course.release import execute_sources
    shutil.copytree(SOURCE, tmp_path / "source" / "ch04_attention")
    for path in execute_sources(tmp_path):
        assert path.read_text() == (SOURCE / path.name).read_text(), f"{path.name}: run `make release`"
        assert '"execution"' not in path.read_text()


def test_in_a_real_kernel_sliders_only_when_input_is_allowed():
    """A Jupyter kernel: the cell run as a frontend runs it (allow_stdin=True) displays the widget; run
    as nbclient and nbval run it (allow_stdin=False) it draws the static plot, in well under a second."""
    from jupyter_client.manager import start_new_kernel
    nb = nbformat.read(SOURCE / "ex2_causal_mask.ipynb", as_version=4)
    setup = [c.source for c in nb.cells if c.cell_type == "code"
             and c.metadata.get("nbgrader", {}).get("grade_id") in (None, "ex2_softmax_solution", "ex2_mask_solution")]
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        for source in setup:
            kc.execute_interactive(source, timeout=60, allow_stdin=False, output_hook=lambda msg: None)
        for allow_stdin, want in ((True, WIDGET_MIME), (False, "image/png")):
            mimes, start = [], time.monotonic()
            kc.execute_interactive(_cell(SOURCE / "ex2_causal_mask.ipynb").source, timeout=60,
                                   allow_stdin=allow_stdin, stdin_hook=lambda msg: None,
                                   output_hook=lambda msg: mimes.extend(msg["content"].get("data", {})))
            assert want in mimes, (allow_stdin, mimes)
            if not allow_stdin:
                assert WIDGET_MIME not in mimes and time.monotonic() - start < 20
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
