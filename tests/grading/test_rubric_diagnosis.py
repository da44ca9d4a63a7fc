"""Every catalogue id is diagnosed on its fixture; correct-but-unusual code gets full marks."""
import importlib
import inspect
import pkgutil

import pytest

import autograder
import corpora
import solutions
from autograder import misconceptions
from autograder.grading.rubric import RUBRIC, max_total
from fixture_notebooks import fixture_source, notebook_namespaces

EXPECTED = {e.name: e for e in corpora.load("impl")}
FIXTURES = sorted(EXPECTED)
WRONG = [n for n in FIXTURES if not n.startswith("correct_")]
CORRECT = [n for n in FIXTURES if n.startswith("correct_")]


def _record(name, student="fixture-student"):
    """The fixture graded with notebook semantics: the notebooks a student would hand in, each run on
    its own, a grade cell's checks calling its own notebook's functions (as nbgrader autograde does)."""
    return autograder.grade_namespace(notebook_namespaces(fixture_source(name)), student)


def test_every_catalogue_id_has_a_fixture():
    diagnosed = {part for n in WRONG if EXPECTED[n].diagnosis for part in EXPECTED[n].diagnosis.split("+")}
    assert set(misconceptions.IDS) <= diagnosed
    assert {"no-scaling", "scale-by-dk", "softmax-wrong-axis", "no-max-subtraction", "weights-transposed",
            "outputs-swapped", "mask-after-softmax", "diagonal-masked", "future-visible",
            "multiplicative-mask", "mask-missing", "dtype-ignored", "linear-in-n", "expansion-missing",
            "crossover-off-by-one", "cross-causal-mask"} <= set(misconceptions.IDS)


@pytest.mark.parametrize("name", WRONG)
@pytest.mark.parametrize("student", ["alice", "bob"])
def test_fixture_is_diagnosed_and_loses_intended_points(name, student):
    want = EXPECTED[name]
    record = _record(name, student)
    failed = [c for c in record.checks if not c.passed]
    assert failed, f"{name} lost nothing"
    assert {c.diagnosis for c in failed} == {want.diagnosis}
    lost = {}
    for c in failed:                           # a failed check may keep the share its evidenced parts earn
        lost[c.grade_id] = lost.get(c.grade_id, 0) + c.max_points - c.points
    assert lost == want.loses
    assert record.total == max_total() - sum(want.loses.values())
    if want.diagnosis:
        assert all("It looks like" in c.message for c in failed)
    if "+" in (want.diagnosis or ""):
        assert all("two mistakes together" in c.message for c in failed)
    stages = set(want.stage) if isinstance(want.stage, tuple) else {want.stage}      # STAGE: one, or a tuple
    assert {c.stage for c in failed} == stages
    assert any(want.says in c.message for c in failed), [c.message for c in failed]


@pytest.mark.parametrize("name", CORRECT)
def test_correct_but_unusual_gets_full_marks(name):
    record = _record(name)
    assert [c for c in record.checks if not c.passed] == []
    assert record.total == record.max_total == max_total()


def test_engine_gets_full_marks():
    assert autograder.grade_namespace(vars(solutions), "engine").total == max_total()


def test_missing_functions_fail_with_not_defined():
    record = autograder.grade_namespace({"softmax": solutions.softmax}, "x")
    assert record.total == sum(i.points for i in RUBRIC["ex1_softmax"])
    missing = [c for c in record.checks if not c.passed]
    assert all("is not defined" in c.message for c in missing)


def _source_lines():
    from autograder.grading import checks
    lines = set()
    for m in pkgutil.iter_modules(checks.__path__):
        src = inspect.getsource(importlib.import_module(f"autograder.grading.checks.{m.name}"))
        lines |= {ln.strip() for ln in src.splitlines() if len(ln.strip()) > 25 and not ln.strip().startswith(('"', "f\"", "#"))}
    return lines


def test_messages_never_contain_test_source():
    lines = _source_lines()
    for name in FIXTURES:
        for c in _record(name).checks:
            assert not any(line in c.message for line in lines), c.message
            assert "Traceback" not in c.message and "rng" not in c.message
