"""nbgrader's door goes on when a student's worker stops reading (issue 35, item 1).

``nbgrader autograde`` grades in its own process, one student after another (our step grades in that process,
the in-process executor): a notebook that stopped its worker reading before a cell of 2 MiB blocked it for
ever in a write, and no student after it was autograded. Now the worker is ended at its deadline
(``c.SandboxedExecute.limits`` short here), the notebook flagged, and the next students are graded. It hung
on the old code (nbgrader's command is ended at its timeout, a failure)."""
from __future__ import annotations

import pytest

from batch_helpers import export_gradebook, make_class
from deaf_workers import DEAF, SHORT, WATCHDOG, plant
from nbgrader_fast import nbgrader, run_nbgrader

A = "ch04_attention"


@pytest.mark.timeout(900)
def test_nbgrader_autograde_ends_a_worker_that_stops_reading_and_grades_the_next_students(tmp_path):
    course = make_class(tmp_path, ["correct-1"], custom={DEAF: {}, "zed": {}})     # nbgrader: deaf, then zed
    plant(course / "submitted" / DEAF / A, "reads-elsewhere")
    with open(course / "nbgrader_config.py", "a") as f:
        f.write(f"\nc.SandboxedExecute.limits = {SHORT.to_dict()!r}\n")
    run_nbgrader(["generate_assignment", A, "--force", "--log-level=WARN"], course, "generate_assignment")
    proc = nbgrader(["autograde", A, "--force", "--log-level=WARN"], course, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    scores = export_gradebook(course)
    assert scores["correct-1"] == scores["zed"] == 28.0
    assert 0 < scores[DEAF] < 28.0                                  # graded as far as it goes
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        notebook = gb.find_submission_notebook("ex2_causal_mask", A, DEAF)
        assert notebook.needs_manual_grade                           # flagged, with the reason
        said = " ".join(c.auto_comment or "" for c in notebook.comments)
        assert "stopped reading" in said and WATCHDOG not in said, said        # the deadline ended it
