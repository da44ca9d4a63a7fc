"""nbgrader end to end for students: validate (slow). The instructor's side, autograde + export agreeing
with `grade`, is tests/env/nbgrader/test_course_agreement.py."""
from autograder.samples.synthetic import write_submission
from conftest import RELEASE, SOURCE
from nbgrader_fast import nbgrader


def _validate(path):
    proc = nbgrader(["validate", str(path)], path.parent, timeout=300)
    return proc.stdout + proc.stderr


def test_validate_filled_passes_and_unfilled_fails_naming_the_cell(tmp_path):
    filled = write_submission(RELEASE, SOURCE, tmp_path / "filled")
    for nb in sorted(filled.glob("*.ipynb")):
        assert "Success! Your notebook passes all the tests." in _validate(nb), nb.name
    out = _validate(RELEASE / "ex2_causal_mask.ipynb")
    assert "VALIDATION FAILED ON 2 CELL(S)" in out
    assert "m = causal_mask(3)" in out and "NotImplementedError" in out
