"""nbgrader end to end: validate for students, autograde + export for instructors (slow)."""
import subprocess
import sys

import pytest

import autograder
from autograder.nbgrader_cli import tool_env
from autograder.submissions import write_submission
from conftest import RELEASE, SOURCE
from nbgrader_helpers import add_student, autograde_and_export, fixture_overrides, make_course

pytestmark = pytest.mark.slow

CLASS = {"ada": None, "ben": "mask_after_softmax", "cy": "no_scaling"}


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


def test_autograde_small_class_matches_rubric(tmp_path):
    course = make_course(tmp_path)
    for student, fixture in CLASS.items():
        add_student(course, student, fixture)
    scores = autograde_and_export(course)
    expected = {}
    for student, fixture in CLASS.items():
        ns = {}
        import fixtures.impl.correct_plain as base
        ns.update(vars(base))
        if fixture:
            for code in fixture_overrides(fixture).values():
                exec(code, ns)                                  # noqa: S102 - our own fixture code
        expected[student] = autograder.grade_namespace(ns, student)["total"]
    assert scores == {"ada": 28.0, "ben": 23.0, "cy": 26.0}
    assert scores == {k: float(v) for k, v in expected.items()}
