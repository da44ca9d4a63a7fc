"""nbgrader end to end for students: validate (slow). The instructor's side, autograde + export agreeing
with `grade`, is tests/env/nbgrader/test_course_agreement.py."""
from autograder.samples.synthetic import write_submission
from conftest import RELEASE, SOURCE
from nbgrader_fast import nbgrader

VALIDATE_WIDTH = 90                        # nbgrader's Validator.width default (tests/notebooks/test_visible_tests.py)


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


def test_nbgrader_validate_in_a_students_folder_shows_advice_and_evidence_uncut(tmp_path):
    """`nbgrader validate` on ex2 without sqrt(d_k), in a student's folder with no course config (so at
    nbgrader's default 90 columns): the advice and the evidence after it both show whole, on lines of their own."""
    wrong = ("def causal_attention(Q, K, V):\n    w = softmax(Q @ K.T + causal_mask(len(Q)))\n"
             "    return w @ V, w\n")
    folder = write_submission(RELEASE, SOURCE, tmp_path / "student", {"causal_attention": wrong},
                              skip=("ex1_attention", "ex3_memory", "ex4_cross_attention"))
    assert not (folder / "nbgrader_config.py").exists()
    proc = nbgrader(["validate", "ex2_causal_mask.ipynb"], folder, timeout=300)
    said = proc.stdout + proc.stderr
    assert "Success" not in said and "=" * VALIDATE_WIDTH + "\n" in said     # the default width
    assert "AssertionError: Divide the scores by sqrt(d_k) before masking:\n" in said, said
    assert "    your weights are softmax(Q K^T + mask), unscaled\n" in said, said
    # Validate (the command and the notebook's dialog alike) shows the failed cell, then its error: the cell is
    # a short call of the tests written out above it, and the error is the advice alone, with no traceback.
    shown = said[said.index("The following cell failed:"):].split("\n")
    advice = next(i for i, line in enumerate(shown) if "AssertionError: " in line)
    assert advice <= 7 and "Traceback" not in "\n".join(shown[:advice]), "\n".join(shown[:advice + 1])
