"""nbgrader end to end for students: validate (slow). The instructor's side, autograde + export agreeing
with `grade`, is tests/test_course_agreement.py."""
import subprocess
import sys

import pytest

from autograder.course.nbgrader_cli import tool_env
from autograder.samples.synthetic import write_submission
from conftest import RELEASE, SOURCE

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
