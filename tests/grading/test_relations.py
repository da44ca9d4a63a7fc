"""The metamorphic relations a property point is paid on (issue 37, item 3), declared once in
autograder/grading/relations.py: every correct implementation and every variant of the catalogue (a wrong scale,
axis, mask or maximum: code that computes) satisfies them; junk (random rows seeded by a hash of the inputs or
not, constants, uniform or identity weights, the inputs handed back, lookups of the visible values, code that
detects the grader) does not, so it earns at most the shape points."""
import importlib

import numpy as np
import pytest

import solutions
from autograder.grading.asking import ask
from autograder.grading.checks._attention import REFERENCE, pair_of
from autograder.grading.checks._evidence import array_evidence, attention_evidence, unproven
from autograder.grading.relations import EVIDENCE, RELATIONS
from autograder.grading.student import NotebookFunctions, to_array
from autograder.misconceptions import entries_for
from diagnosis_corpus import cases

ATTENTION = ("scaled_dot_product_attention", "causal_attention", "cross_attention")
JUNK = ("nothing_random_rows_normalised", "nothing_random_rows_seeded_by_inputs", "nothing_zeros_of_the_right_shapes",
        "nothing_uniform_weights", "nothing_identity_weights", "nothing_echoes_its_inputs",
        "nothing_lookup_of_visible_values", "nothing_right_only_on_small_shapes")


def _unproven(function: str, impl, part, seed: int = 0):
    """What the evidence questions show of ``impl`` standing for ``function`` (None: shown to compute)."""
    rng = np.random.default_rng(seed)
    student = NotebookFunctions({function: impl})
    if function == "softmax":
        ev = array_evidence(rng, np.zeros((3, 4)), axis=-1)
        got = ask(student, function, list(ev.questions))
        return unproven(ev, got, lambda r: to_array(r.get(), "softmax"), solutions.softmax)
    ev = attention_evidence(function, rng, square=function == "causal_attention")
    got = ask(student, function, list(ev.questions))
    return unproven(ev, got, lambda r: pair_of(function, r, ev.case), REFERENCE[function], part)


def _correct_implementations():
    found = [("engine", vars(solutions))]
    for case in cases():
        if case.expected == "correct":
            found.append((case.name, case.namespace()))
    for name in ("correct_plain", "correct_einsum", "correct_finite_mask", "correct_loops_renormalise",
                 "correct_numpy_dtypes"):
        found.append((name, vars(importlib.import_module(f"fixtures.impl.{name}"))))
    return found


@pytest.mark.parametrize("name, namespace", _correct_implementations(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_correct_implementation_satisfies_every_relation(name, namespace):
    for function in ("softmax", *ATTENTION):
        fn = namespace.get(function)
        if fn is None:
            continue
        parts = (None,) if function == "softmax" else (0, 1)
        for part in parts:
            for seed in (0, 1):
                ev_said = _unproven(function, fn, part, seed)
                assert ev_said is None, (name, function, part, ev_said)
                _relations_hold(function, fn, seed)


def _relations_hold(function, fn, seed):
    """Beyond "right there": each relation of the function holds on its own (not only one of a group)."""
    from autograder.grading.relations import laid_out, relation
    rng = np.random.default_rng(seed + 10)
    if function == "softmax":
        case = (rng.normal(0, 2, (5, 7)),)
        for name in (n for group in EVIDENCE[function] for n in group):
            inputs, kept = RELATIONS[name].derive(case, rng)
            answers = [fn(*a) for a in [case, *inputs]]
            assert RELATIONS[name].holds(case, answers, kept), (function, name)
        return
    n = 7
    case = (rng.normal(size=(n, 4)), rng.normal(size=(n if function == "causal_attention" else 9, 4)),
            rng.normal(size=(n if function == "causal_attention" else 9, 3)))
    for name in (n for group in EVIDENCE[function] for n in group):
        if function == "causal_attention" and name == "permute-keys":
            continue
        inputs, kept = relation(name, 1).derive(case, rng)
        answers = [laid_out(tuple(np.asarray(v) for v in fn(*a)), a) for a in [case, *inputs]]
        for part in (0, 1):
            assert relation(name, part).holds(case, answers, kept), (function, name, part)


@pytest.mark.parametrize("function", ["softmax", *ATTENTION])
def test_every_variant_of_the_catalogue_is_shown_to_compute(function):
    """A wrong formula computes: its property points are not charged for its mistake (that is its own check's)."""
    for entry in entries_for(function):
        impl = (lambda x, axis=-1, e=entry: e.impl(x, axis)) if function == "softmax" else entry.impl
        for part in (None,) if function == "softmax" else (1,):
            said = _unproven(function, impl, part)
            assert said is None, (entry.id, entry.knobs, said)


@pytest.mark.parametrize("junk", JUNK)
def test_junk_is_not_shown_to_compute(junk):
    mod = importlib.import_module(f"fixtures.impl.{junk}")
    for function in ("softmax", *ATTENTION):
        fn = getattr(mod, function)
        if fn is getattr(importlib.import_module("fixtures.impl.correct_plain"), function):
            continue                                                      # the fixture keeps the right one
        parts = (None,) if function == "softmax" else (0, 1)
        for part in parts:
            if junk == "nothing_right_only_on_small_shapes" and part == 0:
                continue                                 # its output is its weights @ V: computed from V
            assert _unproven(function, fn, part) is not None, (junk, function, part)


def test_a_catalogue_variant_that_breaks_a_relation_still_satisfies_its_group():
    """A mask multiplied into the scores does not shift with them, but the keys it lets a row see permute; a
    softmax over the queries shifts with the scores. Each satisfies one relation of the group, which is why a
    group asks for one of them."""
    from autograder.grading.relations import laid_out, relation
    rng = np.random.default_rng(5)
    case = (rng.normal(size=(7, 4)), rng.normal(size=(7, 4)), rng.normal(size=(7, 3)))
    by_id = {e.id + str(e.knobs): e for e in entries_for("causal_attention")}
    holds = {}
    for key in ("multiplicative-mask{'mask': 'multiplicative'}", "softmax-wrong-axis{'axis': 0}"):
        for name in ("shift-scores", "permute-past-keys"):
            inputs, kept = relation(name, 1).derive(case, rng)
            answers = [laid_out(by_id[key].impl(*a), a) for a in [case, *inputs]]
            holds[key, name] = relation(name, 1).holds(case, answers, kept)
    assert holds["multiplicative-mask{'mask': 'multiplicative'}", "shift-scores"] is False
    assert holds["multiplicative-mask{'mask': 'multiplicative'}", "permute-past-keys"] is True
    assert holds["softmax-wrong-axis{'axis': 0}", "shift-scores"] is True
