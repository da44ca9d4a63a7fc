"""nbgrader's door under a memory cap keeps grading the next student (issue 35, item 7).

Results were budgeted by their bytes on the wire, and each is read as float64: a student whose functions
return 64 Mi numbers of int8 or bool (64 MiB on the wire, within a notebook's share; 512 MiB once read)
took ``nbgrader autograde``'s process past its memory cap, and the students after it were never graded.
Now every budget is on what the grader holds once it reads a result: those results are refused in the
sandbox with the budget's message, and the class is graded.

Measured here (cgroup v1 max_usage of ``nbgrader autograde`` and its fork server; the workers are in cgroups
of their own): the class below peaks near 170 MiB, 840 MiB before the fix; a submission that returns the
most the budgets accept (64 MiB of results a notebook once read, int8 or float64 alike) near 570 MiB.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from autograder.assignment import FUNCTIONS
from autograder.course.nbgrader_cli import tool_env
from batch_helpers import export_gradebook, make_class
from memory_cap import MemoryCap, unavailable
from nbgrader_fast import run_nbgrader

A = "ch04_attention"
CAP = 400 << 20
KILLERS = {"a-bool": "bool_", "b-int8": "int8"}              # graded before correct-1 (nbgrader sorts them)


def _returns(dtype: str) -> dict[str, str]:
    """Every function returns 64 Mi numbers of ``dtype``: what one result could be, counted on the wire."""
    return {f: f"def {f}(*args, **kwargs):\n    return np.ones(64 << 20, dtype=np.{dtype})\n"
            for f in sorted({f for names in FUNCTIONS.values() for f in names})}


@pytest.mark.timeout(900)
def test_nbgrader_autograde_under_a_memory_cap_grades_every_student(tmp_path):
    if unavailable():
        pytest.skip(unavailable())
    course = make_class(tmp_path, ["correct-1"], custom={s: _returns(d) for s, d in KILLERS.items()})
    run_nbgrader(["generate_assignment", A, "--force", "--log-level=WARN"], course, "generate_assignment")
    cap = MemoryCap(CAP)
    try:
        proc = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", A, "--force", "--log-level=WARN"],
                              cwd=course, env=tool_env(), capture_output=True, text=True, timeout=600,
                              preexec_fn=cap.enter)
        killed = cap.killed()
    finally:
        cap.close()
    assert proc.returncode == 0 and not killed, (proc.returncode, killed, proc.stderr[-2000:])
    assert export_gradebook(course) == {"a-bool": 0.0, "b-int8": 0.0, "correct-1": 28.0}
    said = (course / "autograded" / "b-int8" / A / "ex1_attention.ipynb").read_text()
    assert "the result takes 512 MiB as the grader reads it" in said
