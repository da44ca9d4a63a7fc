"""The hardened grader gives the same record as the in-process rubric, submission by submission."""
import pytest

import autograder
from autograder.run.hardened import grade_submission
from autograder.samples.synthetic import write_submission
from conftest import RELEASE, ROOT, SOURCE
from nbgrader_helpers import fixture_overrides
from test_notebook_semantics import namespaces
from test_rubric_diagnosis import FIXTURES


def _summary(record):
    return [(c.grade_id, c.check, c.passed, c.diagnosis) for c in record.checks]


@pytest.mark.parametrize("fixture", FIXTURES)
def test_sandbox_equals_in_process(server, tmp_path, fixture):
    overrides = fixture_overrides(fixture)
    folder = write_submission(RELEASE, SOURCE, tmp_path / "submitted" / fixture / "ch04_attention",
                              overrides)
    hardened = grade_submission(folder, course=ROOT, server=server)
    in_process = autograder.grade_namespace(namespaces(overrides=overrides), fixture)   # one namespace per notebook
    assert hardened.student_id == fixture
    assert _summary(hardened) == _summary(in_process)
    assert hardened.total == in_process.total and not hardened.needs_review


def test_damaged_submission_is_flagged_and_partially_graded(server, tmp_path):
    folder = write_submission(RELEASE, SOURCE, tmp_path / "submitted" / "dam" / "ch04_attention")
    (folder / "ex3_memory.ipynb").unlink()
    (folder / "ex4_cross_attention.ipynb").write_text("{ not json")
    record = grade_submission(folder, course=ROOT, server=server)
    assert record.needs_review
    assert record.total == 28 - 6 - 5 and record.total <= record.max_total == 28
    assert any("missing" in p for p in record.integrity)
