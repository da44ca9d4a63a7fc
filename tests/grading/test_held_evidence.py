"""The evidence beyond its first call is asked only when a judge reads it (issue 40: evidence at the cost of
the floor). A property check's evidence (``_evidence.py``: a fresh input, asked twice, then the relations' inputs)
is read past its first answer only when that answer is not the engine's; the runner asks the first call with
the check's questions and holds the rest for the second batch, where the diagnoses' questions go, and judges the
check again with their answers. Right code is asked none of them; every verdict is the one the check gives with
every question asked up front, in no more batches than before.
"""
from dataclasses import asdict

import pytest

import autograder
import solutions
from autograder.assignment import notebook_of
from autograder.grading import runner
from autograder.grading.namespace import run_cell
from autograder.grading.rubric import RUBRIC
from autograder.grading.seeds import check_rng, student_seed
from autograder.grading.student import NotebookFunctions
from diagnosis_corpus import Case

ENGINE = {k: v for k, v in vars(solutions).items() if callable(v)}
# a wrong formula (its evidence read in full), junk the evidence refuses, answers that change between calls
WRONG = ["no_scaling", "nothing_random_rows_normalised", "nothing_echoes_its_inputs", "state_cached_by_shape",
         "mask_after_softmax"]


def _counted(namespace: dict) -> tuple[dict, list]:
    calls = []

    def counting(name, fn):
        def call(*args, **kwargs):
            calls.append(name)
            return fn(*args, **kwargs)
        return call
    return {k: counting(k, v) for k, v in namespace.items()}, calls


def _declared(grade_id: str, student: str) -> tuple[int, int]:
    """(questions the cell's checks declare, of them the evidence beyond its first call)."""
    seed, total, rest = student_seed(student), 0, 0
    for item in RUBRIC[grade_id]:
        plan = item.check.ask(check_rng(seed, grade_id, item.name))
        total += len(plan.questions)
        rest += len(getattr(getattr(plan, "evidence", None), "questions", ())[1:])
    return total, rest


@pytest.mark.parametrize("grade_id", [g for g in RUBRIC if g not in ("ex2_mask", "ex3_memory", "ex3_crossover")])
def test_right_code_is_asked_no_evidence_past_its_first_call(grade_id):
    namespace, calls = _counted(ENGINE)
    run_cell(NotebookFunctions(namespace, notebook_of(grade_id)), grade_id, "held")
    total, rest = _declared(grade_id, "held")
    assert rest > 0
    assert len(calls) == total - rest


RANDOM = "nothing_random_rows_normalised"      # its plotted weights (``details``) are new random numbers each time


def _records(module: str, student: str) -> list:
    checks = autograder.grade_namespace(Case(module, "correct", "impl").namespace(), student).checks
    return [{k: v for k, v in asdict(c).items() if module != RANDOM or k != "details"} for c in checks]


@pytest.mark.parametrize("module", WRONG)
def test_each_verdict_is_the_one_with_every_question_asked_up_front(module, monkeypatch):
    held = _records(module, "held-a")
    monkeypatch.setattr(runner.Held, "__init__", lambda self, plan: (setattr(self, "at", []),
                                                                       setattr(self, "needed", False))[0])
    assert _records(module, "held-a") == held
