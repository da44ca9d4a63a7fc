"""Every check in the rubric is failed by some fixture and passed by every correct one; random
correct-but-unusual implementations get full marks and no diagnosis."""
from collections import defaultdict
from functools import lru_cache

import numpy as np
import pytest

import autograder
import solutions
from autograder.grading.rubric import RUBRIC, max_total
import importlib

from test_rubric_diagnosis import CORRECT, WRONG, _record


@lru_cache(maxsize=None)
def _failed_checks(name: str) -> frozenset:
    record = _record(name, "coverage")
    return frozenset((c.grade_id, c.check) for c in record.checks if not c.passed)


@pytest.mark.parametrize("name", WRONG)
def test_a_fixture_fails_the_checks_it_names(name):
    """Each wrong fixture names the checks it must fail (``FAILS``, grade cell -> checks), so grepping
    tests/ for a check's name finds the fixtures that fail it; it fails those and no others."""
    declared = getattr(importlib.import_module(f"fixtures.impl.{name}"), "FAILS", None)
    assert declared is not None, f"{name}.py names no FAILS: add FAILS = {{grade_id: (check, ...)}}"
    assert _failed_checks(name) == frozenset((g, c) for g, checks in declared.items() for c in checks)


def test_every_check_is_failed_by_a_fixture_and_passed_by_the_correct_ones():
    failed_by = defaultdict(set)
    for name in WRONG:
        for key in _failed_checks(name):
            failed_by[key].add(name)
    for name in CORRECT:
        assert _failed_checks(name) == frozenset(), name
    unfailed = [(g, item.name) for g, items in RUBRIC.items() for item in items if not failed_by[g, item.name]]
    assert unfailed == [], f"checks that no fixture fails: {unfailed}"


# --- random honest variants --------------------------------------------------------------------

SOFTMAX = [
    "def softmax(x, axis=-1):\n    e = np.exp(x - np.max(x, axis=axis, keepdims=True))\n"
    "    return e / np.sum(e, axis=axis, keepdims=True)\n",
    "def softmax(x, axis=-1):\n    m = np.max(x, axis=axis, keepdims=True)\n"
    "    lse = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))\n    return np.exp(x - lse)\n",
    "def softmax(x, axis=-1):\n    x = np.asarray(x, dtype=np.float32)\n"
    "    e = np.exp(x - x.max(axis=axis, keepdims=True))\n    return e / e.sum(axis=axis, keepdims=True)\n",
]
SCORES = ["Q @ K.T / np.sqrt(Q.shape[-1])", "(Q / math.sqrt(Q.shape[1])) @ K.T",
          "np.einsum('qd,kd->qk', Q, K) * Q.shape[-1] ** -0.5", "np.dot(Q, K.T) / np.sqrt(K.shape[1])",
          "np.matmul(Q, np.swapaxes(K, -1, -2)) / math.sqrt(Q.shape[-1])"]
MASKS = ["np.triu(np.full((n, n), -np.inf), k=1)", "np.where(np.arange(n)[None] > np.arange(n)[:, None], -1e9, 0.0)",
         "np.triu(np.ones((n, n)), 1) * -1e30", "np.where(np.tri(n, dtype=bool), 0.0, np.finfo(np.float64).min)"]
APPLY = ["softmax(S + causal_mask(len(Q)), axis=-1)",
         "softmax(np.where(np.tri(len(Q), dtype=bool), S, -np.inf))"]
OUTPUT = ["w @ V", "np.einsum('qk,kv->qv', w, V)", "np.dot(w, V)"]
MEMORY = ["n * n * dtype_bytes", "int(n) ** 2 * int(dtype_bytes)", "dtype_bytes * n * n"]
CROSSOVER = ["expansion * d_model", "int(math.ceil(expansion * d_model * dtype_bytes / dtype_bytes))",
             "next(n for n in (expansion * d_model - 1, expansion * d_model) if n * n >= n * expansion * d_model)"]


def honest_variant(rng: np.random.Generator) -> str:
    pick = lambda options: options[int(rng.integers(len(options)))]    # noqa: E731
    out = pick(OUTPUT)
    return "\n".join([
        "import math", "import numpy as np", pick(SOFTMAX),
        f"def scaled_dot_product_attention(Q, K, V):\n    S = {pick(SCORES)}\n    w = softmax(S, axis=-1)\n"
        f"    return {out}, w\n",
        f"def causal_mask(n):\n    return {pick(MASKS)}\n",
        f"def causal_attention(Q, K, V):\n    S = {pick(SCORES)}\n    w = {pick(APPLY)}\n    return {out}, w\n",
        f"def attention_memory_bytes(n, dtype_bytes=2):\n    return {pick(MEMORY)}\n",
        "def ffn_memory_bytes(n, d_model, dtype_bytes=2, expansion=4):\n"
        "    return n * expansion * d_model * dtype_bytes\n",
        f"def crossover_length(d_model, dtype_bytes=2, expansion=4):\n    return {pick(CROSSOVER)}\n",
        f"def cross_attention(Q, K, V):\n    S = {pick(SCORES)}\n    w = softmax(S)\n    return {out}, w\n",
    ])


@pytest.mark.parametrize("seed", range(12))
def test_random_honest_variants_get_full_marks_and_no_diagnosis(seed):
    source = honest_variant(np.random.default_rng(seed))
    ns: dict = {}
    exec(source, ns)                                                   # noqa: S102 - our own test code
    record = autograder.grade_namespace(ns, f"honest-{seed}")
    wrong = [(c.check, c.message) for c in record.checks if not c.passed]
    assert wrong == [], source
    assert record.total == max_total()
    assert not any(c.diagnosis or c.stage for c in record.checks)


def test_the_rubric_page_documents_every_check_with_its_points():
    """docs/reference/rubric.md (generated by scripts/gen_docs.py) lists every check with its points."""
    from conftest import ROOT
    rows = {}
    for line in (ROOT / "docs" / "reference" / "rubric.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) == 6 and cells[0].startswith("`ex") and "." in cells[0]:
            rows[cells[0].strip("`")] = int(cells[1])
    assert rows == {f"{g}.{item.name}": item.points for g, items in RUBRIC.items() for item in items}


# --- no credit for doing nothing -----------------------------------------------------------------

def _zeros_namespace() -> dict:
    pair = lambda Q, K, V: (np.zeros((len(Q), V.shape[1])), np.zeros((len(Q), len(K))))   # noqa: E731
    return {"softmax": lambda x, axis=-1: np.zeros(np.shape(x)), "scaled_dot_product_attention": pair,
            "causal_mask": lambda n: np.zeros((n, n)), "causal_attention": pair, "cross_attention": pair,
            "attention_memory_bytes": lambda n, dtype_bytes=2: 0,
            "ffn_memory_bytes": lambda n, d_model, dtype_bytes=2, expansion=4: 0,
            "crossover_length": lambda d_model, dtype_bytes=2, expansion=4: 0}


SHAPE_CHECKS = {("ex1_attention", "shapes"), ("ex2_mask", "shape_and_dtype"), ("ex4_cross", "shapes")}


def test_zeros_of_the_right_shapes_earn_the_shape_points_and_nothing_more():
    """It earned 8/28: any_axis, both stability checks, no_future_leakage and attention_bytes_measured
    passed on constant output."""
    record = autograder.grade_namespace(_zeros_namespace(), "zeros")
    assert {(c.grade_id, c.check) for c in record.checks if c.passed} == SHAPE_CHECKS
    assert record.total == 3


@pytest.mark.parametrize("fill", [0.5, 1.0])
def test_constant_output_earns_the_shape_points_and_nothing_more(fill):
    const = lambda Q, K, V: (np.full((len(Q), V.shape[1]), fill), np.full((len(Q), len(K)), 1 / len(K)))  # noqa: E731
    ns = {**_zeros_namespace(), "softmax": lambda x, axis=-1: np.ones(np.shape(x)) / np.shape(x)[axis],
          "scaled_dot_product_attention": const, "causal_attention": const, "cross_attention": const,
          "attention_memory_bytes": lambda n, dtype_bytes=2: 7}
    record = autograder.grade_namespace(ns, "constant")
    assert {(c.grade_id, c.check) for c in record.checks if c.passed} == SHAPE_CHECKS
    failed = {(c.grade_id, c.check): c.message for c in record.checks if not c.passed}
    for key in [("ex1_softmax", "any_axis"), ("ex1_softmax", "stable_for_large_inputs"),
                ("ex1_attention", "rows_sum_to_one"), ("ex1_attention", "stable_for_large_scores"),
                ("ex2_causal", "no_future_leakage"), ("ex4_cross", "no_causal_mask")]:
        assert "for different inputs" in failed[key] and "earns nothing" in failed[key], (key, failed[key])


def test_a_wrong_formula_that_computes_is_still_charged_once():
    """Not computing is a verdict on constant output only: unscaled scores lose the value checks alone."""
    unscaled = lambda Q, K, V: (lambda w: (w @ V, w))(solutions.softmax(Q @ K.T))   # noqa: E731
    ns = {**{k: getattr(solutions, k) for k in _zeros_namespace()}, "scaled_dot_product_attention": unscaled}
    record = autograder.grade_namespace(ns, "unscaled")
    assert [(c.grade_id, c.check) for c in record.checks if not c.passed] == [
        ("ex1_attention", "weights_and_output_match")]
