"""A code cell of megabytes (a notebook may hold 50 MB) runs like any other: its source travels in
the RPC frame's payload, not in the 1 MiB JSON header."""
from __future__ import annotations

from autograder.sandbox import rpc
from sandbox_helpers import RIGHT_MASK, ex2_notebook, grade


def test_a_cell_of_two_megabytes_defines_its_function(tmp_path, server):
    padding = "# " + "x" * (2 << 20) + "\n"
    assert len(padding) > rpc.MAX_HEADER
    path = ex2_notebook(tmp_path, "big-cell", padding + RIGHT_MASK)
    record = grade(path, server)
    said = " ".join([*record.integrity, *record.notes, *(c.message for c in record.checks)])
    assert record.cells["ex2_mask"].earned == record.cells["ex2_mask"].max > 0, said
    assert "not defined" not in said and "stopped the worker" not in said


def test_a_cell_over_the_frame_cap_is_skipped_with_its_size(tmp_path, server, monkeypatch):
    import autograder.run.sandboxed_student as sandboxed
    monkeypatch.setattr(sandboxed, "MAX_PAYLOAD", 1 << 20)          # stands for 256 MiB: same rule, less memory
    path = ex2_notebook(tmp_path, "huge-cell", "# " + "x" * (3 << 20) + "\n" + RIGHT_MASK)
    record = grade(path, server)
    assert any("ex2_causal_mask.ipynb is 3 MiB of code; cells over 1 MiB are not run, so it was skipped" in i
               for i in record.integrity), record.integrity
    assert record.needs_review
