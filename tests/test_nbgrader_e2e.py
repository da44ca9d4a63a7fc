"""nbgrader end to end: validate for students, autograde + export for instructors (slow)."""
import subprocess
import sys

import pytest

from autograder.batch import grade_batch
from autograder.nbgrader_cli import run_nbgrader, tool_env
from autograder.submissions import write_submission
from batch_helpers import make_class
from conftest import RELEASE, SOURCE
from nbgrader_helpers import autograde_and_export

pytestmark = pytest.mark.slow


def _validate(path):
    proc = subprocess.run([sys.executable, "-m", "nbgrader", "validate", str(path)], env=tool_env(),
                          capture_output=True, text=True, cwd=path.parent, timeout=300)
    return proc.stdout + proc.stderr


def test_validate_filled_passes_and_unfilled_fails_naming_the_cell(tmp_path):
    filled = write_submission(RELEASE, SOURCE, tmp_path / "filled")
    for nb in sorted(filled.glob("*.ipynb")):
        assert "Success! Your notebook passes all the tests." in _validate(nb), nb.name
    out = _validate(RELEASE / "ex2_causal_mask.ipynb")
    assert "VALIDATION FAILED ON 2 CELL(S)" in out
    assert "m = causal_mask(3)" in out and "NotImplementedError" in out


HONEST = ["correct-1", "correct-einsum", "correct-finite-mask", "no-scaling", "mask-after-softmax",
          "dtype-ignored", "cross-causal-mask", "unfinished-ex4"]


def test_nbgrader_autograde_agrees_with_hardened_grader(tmp_path):
    """On honest submissions of the sample class both graders give the same totals."""
    course = make_class(tmp_path, HONEST)
    run_nbgrader(["generate_assignment", "ch04_attention", "--force", "--log-level=WARN"], course,
                 "generate_assignment")
    nbgrader_scores = autograde_and_export(course)
    hardened = grade_batch(course=course, out=tmp_path / "out", workers=2, progress=False, outputs=False)
    ours = {r.student_id: float(r.total) for r in hardened.records}
    assert nbgrader_scores == ours
    assert ours["correct-1"] == 28.0 and ours["no-scaling"] == 26.0 and ours["mask-after-softmax"] == 24.0
