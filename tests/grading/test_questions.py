"""Questions as data, one round trip per function (issue 40, item 1).

A grade cell's checks declare their questions before any is asked; the questions of one function go in one
batch (one round trip to a sandboxed worker), and the questions that depend on an answer (a diagnosis, a
check's own follow-up) in one more batch per function, at most. Each answer is read right after its call,
or after the last call of a group held together (the state probe); a question that raises or runs past its
time fails alone.
"""
import numpy as np
import pytest

import solutions
from autograder.assignment import notebook_of
from autograder.grading.asking import Question, ask
from autograder.grading.namespace import run_cell
from autograder.grading.rubric import RUBRIC
from autograder.grading.student import NotebookFunctions
from autograder.sandbox.convert import encode_calls
from autograder.sandbox.worker import LATE_AT_MOST, _call_many_fn
from diagnosis_corpus import cases

ENGINE = {k: v for k, v in vars(solutions).items() if callable(v)}
FUNCTIONS_OF = {"ex1_softmax": {"softmax"}, "ex1_attention": {"scaled_dot_product_attention"},
                "ex2_mask": {"causal_mask"}, "ex2_causal": {"causal_attention"},
                "ex3_memory": {"attention_memory_bytes", "ffn_memory_bytes"}, "ex3_crossover": {"crossover_length"},
                "ex4_cross": {"cross_attention"}}


def _rounds(namespace: dict, grade_id: str, student: str = "rounds") -> NotebookFunctions:
    notebook = NotebookFunctions(namespace, notebook_of(grade_id))
    run_cell(notebook, grade_id, student)
    return notebook


@pytest.mark.parametrize("grade_id", list(RUBRIC))
def test_a_cell_asks_each_function_once_when_every_answer_is_right(grade_id):
    """Every check of the cell, and every question of each, in one batch per function."""
    assert _rounds(ENGINE, grade_id).rounds == len(FUNCTIONS_OF[grade_id])


def _one_per_group_and_every_localised():
    """One case of each label group, and every case that is localised or left unnamed (their diagnoses ask the
    most: the count's reading at each size, the competing explanations)."""
    seen, picked = set(), []
    for case in cases():
        if case.group not in seen or case.expected in ("localised", "unnamed"):
            seen.add(case.group)
            picked.append(case)
    return picked


@pytest.mark.parametrize("case", _one_per_group_and_every_localised(), ids=lambda c: c.name)
def test_a_wrong_answer_takes_one_more_batch_per_function_and_every_question_was_declared(case):
    """A diagnosis's questions (its probes, the count's reading, the competing explanations) are declared
    (``misconceptions.follow_ups``) and asked with the other checks' in one more batch: none is asked alone."""
    namespace = case.namespace()
    for grade_id in RUBRIC:
        notebook = _rounds(namespace, grade_id, "declared")
        assert notebook.rounds <= 2 * len(FUNCTIONS_OF[grade_id]), grade_id
        assert getattr(notebook, "extra_rounds", 0) == 0, grade_id


def test_the_answers_of_a_held_group_are_read_after_its_last_call_and_the_others_at_once():
    """One buffer returned by every call: held together, every answer shows the last call's values (the state
    probe sees a caller's results change); asked alone, each shows its own."""
    buffer = np.zeros(2)

    def reused(x):
        buffer[:] = x
        return buffer
    student = NotebookFunctions({"f": reused})
    held = ask(student, "f", [Question("f", (np.full(2, 1.0),), hold=True), Question("f", (np.full(2, 2.0),))])
    alone = ask(student, "f", [Question("f", (np.full(2, 1.0),)), Question("f", (np.full(2, 2.0),))])
    assert [r.value.tolist() for r in held] == [[2.0, 2.0], [2.0, 2.0]]
    assert [r.value.tolist() for r in alone] == [[1.0, 1.0], [2.0, 2.0]]
    payload_calls, payload = encode_calls([((np.full(2, 1.0),), {}), ((np.full(2, 2.0),), {})])
    worker = _call_many_fn(reused, [{**payload_calls[0], "hold": True}, payload_calls[1]], payload, {})
    assert [v.tolist() for _, v in worker] == [[2.0, 2.0], [2.0, 2.0]]
    worker = _call_many_fn(reused, payload_calls, payload, {})
    assert [v.tolist() for _, v in worker] == [[1.0, 1.0], [2.0, 2.0]]


def test_into_hands_a_call_the_arrays_of_an_earlier_one_holding_new_values():
    """Fresh arrays with an old id(): a cache keyed on id(x) returns the earlier answer, in the worker as here."""
    def by_id(x, cache={}):                                        # noqa: B006 - the mistake under test
        return cache.setdefault(id(x), x.sum())
    questions = [Question("f", (np.ones(3),)), Question("f", (np.full(3, 2.0),), into=0)]
    assert [float(r.value) for r in ask(NotebookFunctions({"f": by_id}), "f", questions)] == [3.0, 3.0]
    assert [float(r.value) for r in ask(NotebookFunctions({"f": lambda x: x.sum()}), "f", questions)] == [3.0, 6.0]
    encoded, payload = encode_calls([((np.ones(3),), {}), ((np.full(3, 2.0),), {})])
    out = _call_many_fn(lambda x, cache={}: cache.setdefault(id(x), x.sum()),   # noqa: B006
                        [encoded[0], {**encoded[1], "into": 0}], payload, {})
    assert [float(v) for _, v in out] == [3.0, 3.0]


def test_a_question_that_raises_or_runs_past_its_time_fails_alone():
    """In the worker each call has its own time; after LATE_AT_MOST late calls the rest are not asked."""
    def slow_on_zero(x):
        while x == 0:
            pass
        if x < 0:
            raise ValueError("negative")
        return x * 2
    encoded, payload = encode_calls([((v,), {}) for v in (1.0, 0.0, -1.0, 3.0)])
    out = _call_many_fn(slow_on_zero, encoded, payload, {}, each=0.2)
    assert out[0] == ("ok", 2.0) and out[3] == ("ok", 6.0)
    assert out[1][0] == "error" and "did not return within 0.2 s" in out[1][1]["message"]
    assert out[2][1]["type"] == "ValueError"
    encoded, payload = encode_calls([((0.0,), {})] * (LATE_AT_MOST + 1) + [((1.0,), {})])
    out = _call_many_fn(slow_on_zero, encoded, payload, {}, each=0.1)
    assert [o[1]["type"] for o in out] == ["TimeoutError"] * LATE_AT_MOST + ["NotAsked", "NotAsked"]


def test_in_process_answers_are_what_the_wire_carries():
    """A value the sandbox refuses is refused in-process with the same words; numbers come back as arrays."""
    student = NotebookFunctions({"f": lambda: {"a": 1}, "g": lambda: (1, np.float32(2))})
    (refused,) = ask(student, "f", [Question("f", ())])
    assert "returned a value the grader does not accept: the result is a dict" in str(refused.error)
    (pair,) = ask(student, "g", [Question("g", ())])
    assert [np.asarray(v).dtype for v in pair.value] == [np.dtype(np.int64), np.dtype(np.float32)]
