"""A failure is charged to its cause only: a grading process that dies costs the submission it was
grading, never the classmates queued behind it (once, all 8 honest classmates got 0/28), and the
grader's own parse of a submission is bounded before it materialises anything."""
import os
import signal
import time

import pytest

from autograder.intake.model import Intake
from autograder.intake.parse import MAX_VALUES, parse, shape
from autograder.run.local_pool import ATTEMPTS, run_pool

CLASS = [f"honest-{i}" for i in range(8)]


def _grade(item: str) -> str:
    """A task whose process dies on the bomb (as a grader killed by the kernel's OOM killer would)."""
    if item.startswith("bomb"):
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.05)
    return f"graded {item}"


@pytest.mark.parametrize("where", [0, 4, 8])
def test_a_dying_grader_is_charged_to_its_submission_only(where):
    items = [*CLASS[:where], "bomb", *CLASS[where:]]
    done, gave_up = [], []
    run_pool(_grade, items, done.append, lambda item: gave_up.append(item) or f"flagged {item}", workers=2)
    assert sorted(done) == sorted([f"graded {s}" for s in CLASS] + ["flagged bomb"])
    assert gave_up == ["bomb"]


def test_two_bombs_are_each_charged_and_nobody_else():
    items = ["bomb-1", *CLASS[:4], "bomb-2", *CLASS[4:]]
    done = []
    run_pool(_grade, items, done.append, lambda item: f"flagged {item}", workers=2)
    assert sorted(done) == sorted([f"graded {s}" for s in CLASS] + ["flagged bomb-1", "flagged bomb-2"])


_LOG = None


def _flaky(item: str) -> str:
    """Dies the first time it grades ``once`` (a crash of the process, not of the submission)."""
    marker = os.path.join(_LOG, item)
    if item == "once" and not os.path.exists(marker):
        open(marker, "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    return f"graded {item}"


def test_a_submission_whose_grader_died_once_is_graded_alone_and_kept(tmp_path):
    global _LOG
    _LOG = str(tmp_path)
    done = []
    run_pool(_flaky, ["a", "once", "b", "c"], done.append, lambda item: f"flagged {item}", workers=2)
    assert sorted(done) == ["graded a", "graded b", "graded c", "graded once"] and ATTEMPTS >= 2


@pytest.mark.parametrize("workers", [2, None])
def test_a_class_with_a_grader_killer_is_graded_normally(tmp_path, monkeypatch, workers):
    """The whole batch: one submission kills its grading process; the 8 classmates get their grades. A
    small class (the default: one grading process) too: it was graded in the run's own process, which the
    killer took down, with no grade for anyone."""
    import autograder.run.hardened as hardened
    from autograder.run.batch import grade_batch
    from batch_helpers import make_class
    course = make_class(tmp_path, [], custom={s: {} for s in [*CLASS, "bomb"]})
    real, run = hardened.intake_submission, os.getpid()

    def intake(path, view, student_id, *more, **options):
        if student_id == "bomb":
            assert os.getpid() != run, "graded in the run's own process"
            os.kill(os.getpid(), signal.SIGKILL)
        return real(path, view, student_id, *more, **options)
    monkeypatch.setattr(hardened, "intake_submission", intake)
    result = grade_batch(course=course, out=tmp_path / "out", workers=workers, progress=False, outputs=False)
    totals = {r.student_id: r.total for r in result.records}
    assert totals == {**{s: 28 for s in CLASS}, "bomb": 0}
    bomb = next(r for r in result.records if r.student_id == "bomb")
    assert bomb.needs_review and "died twice on this submission, graded alone" in bomb.integrity[0]


# --- the grader's parse is bounded ------------------------------------------------------------

@pytest.mark.parametrize("item", ["[]", "{}", "0", '"ab"', '{"a":1}'])
def test_a_notebook_of_millions_of_tiny_values_is_refused_before_it_is_parsed(item, monkeypatch):
    """Counted before json.loads: 2 million tiny values would take gigabytes in the grading process,
    outside every sandbox limit."""
    import autograder.intake.parse as parse_module
    text = '{"cells": [' + ",".join([item] * 2 * MAX_VALUES) + "]}"
    depth, values = shape(text)
    assert depth <= 3 and values > MAX_VALUES

    def no_loads(*args, **kwargs):
        raise AssertionError("json.loads was called on a notebook over the budget")
    monkeypatch.setattr(parse_module.json, "loads", no_loads)
    intake = Intake()
    nb, _ = parse(text, "ex1_attention", intake)
    assert nb is None or nb["cells"] == []                       # nothing materialised, or only salvage
    assert any("values" in p and "limit" in p for p in intake.problems)


def test_a_real_notebook_is_far_under_the_budget():
    from conftest import SOURCE
    for path in SOURCE.glob("*.ipynb"):
        depth, values = shape(path.read_text())
        assert values < MAX_VALUES // 50, (path.name, values)


def test_salvage_of_an_over_budget_notebook_is_bounded_too():
    from autograder.intake.parse import salvage
    window = '"source": [' + ",".join(['"ab"'] * 1000) + "], "
    text = "{" + window * (3 * MAX_VALUES // 1000) + "bad"
    assert len(salvage(text)) * 1000 <= MAX_VALUES + 1000
