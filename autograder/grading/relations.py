"""The metamorphic relations a property point is paid on, declared once (issue 37, item 3).

A property check (rows that sum to 1, the axis honoured, stability, no future leakage, the first row, no NaN,
no causal mask) judges one property of an answer; random rows seeded by a hash of the inputs, constants, the
inputs handed back and lookups of the visible values can have such a property without computing anything.
So the point is paid only to a function shown to compute from its inputs: right on a fresh input no visible
test uses, or else satisfying the relations below, which every computing implementation satisfies, right or
wrong in the ways the catalogue knows (a wrong scale, axis, mask or maximum), and junk does not:

- ``queries-matter``: a new Q gives other weights;
- ``scale-values``: V three times larger gives an output three times larger and the same weights;
- ``shift-scores``: the same constant added to every score (Q and K given one more column, c and 1 against 0
  and 1) leaves the weights as they were, whatever the normalisation's axis or the mask added;
- ``permute-keys``: the keys and values in another order put the weights' columns in that order and leave the
  output (not causal attention: its mask depends on position);
- ``permute-past-keys``: the first m keys and values in another order do so for every row after them (causal);
- ``nudged``: inputs moved by a part in 10**9 (below what float32 can hold) give the same answer to the
  tolerance: a computation is continuous there, whatever its formula; an answer read off the inputs' bytes (a
  checksum, a hash's seed) is not, though it may follow a permutation or a new input as a computation does;
- for softmax, ``input-matters`` and ``permute-along-axis`` (``shift-input``, x plus a constant, is what a
  softmax does and a normalisation of x squared does not: the value check's to judge, not evidence of computing);
  for the memory count, ``n-matters`` and ``dtype-scales`` (``attention_bytes_measured`` reads those itself).

``EVIDENCE`` says which must hold for each function: every relation of a tuple, and of a tuple of tuples at
least one (a multiplied mask does not shift, a softmax over the wrong axis does not permute past keys: each
satisfies the other). tests/grading/test_relations.py holds each to every correct implementation and to the
catalogue's variants, and shows junk failing them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..tolerance import allclose, tolerance

ALPHA = 3.0              # V scaled by this
SHIFT = 2.5              # the constant added to every score (before any scale: it is a column of Q)


@dataclass(frozen=True)
class Relation:
    name: str
    said: str                       # what the function did instead, after "returns"
    derive: Callable                # (case, rng) -> (the related inputs: a list of args tuples, what holds reads)
    holds: Callable                 # (case, [base answer, *derived answers], what derive kept) -> bool


def _same(a, b) -> bool:
    rtol, atol = tolerance(a, b)               # wider for an answer returned in float16 (read as HalfPrecision)
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return False
    with np.errstate(all="ignore"):
        return allclose(a, b, rtol, atol, equal_nan=True)


# --- attention: answers are (output, weights), read as returned (``laid_out`` puts them the right way) --------

def laid_out(pair, case):
    """(output (n_q, d_v), weights (n_q, n_k)) from what the student returned, swapped or with the weights
    transposed (told apart by their sizes), or None when they are neither."""
    if not isinstance(pair, tuple) or len(pair) != 2:
        return None
    Q, K, V = case
    n_q, n_k, d_v = len(Q), len(K), V.shape[1]
    for out, w in (pair, pair[::-1]):
        if np.shape(out) == (n_q, d_v) and np.shape(w) == (n_q, n_k):
            return out, w
        if np.shape(out) == (n_q, d_v) and np.shape(w) == (n_k, n_q) and n_q != n_k:
            return out, w.T
    return None


def _new_q(case, rng):
    Q, K, V = case
    return [(rng.normal(0, 1, Q.shape), K, V)], None


def _scaled_v(case, rng):
    Q, K, V = case
    return [(Q, K, V * ALPHA)], None


def _shifted(case, rng):
    Q, K, V = case
    K1 = np.hstack([K, np.ones((len(K), 1))])
    return [(np.hstack([Q, np.zeros((len(Q), 1))]), K1, V), (np.hstack([Q, np.full((len(Q), 1), SHIFT)]), K1, V)], None


NUDGE = 1e-9             # the relative size of the ``nudged`` relation's move of every input


def _nudge(x, rng):
    return x * (1 + NUDGE * rng.uniform(0.5, 1.0, np.shape(x)))


def _nudged(case, rng):
    Q, K, V = case
    return [(_nudge(Q, rng), _nudge(K, rng), V)], None


def _permuted(case, rng, past: bool = False):
    """The keys and values in another order (only the first m of them, ``past``); the order is kept."""
    Q, K, V = case
    n = len(K)
    m = max(n // 2, 2) if past else n
    order = np.concatenate([np.roll(np.arange(m), 1), np.arange(m, n)])
    return [(Q, K[order], V[order])], (order, m if past else 0)


def _permutes(case, answers, kept, part: int) -> bool:
    """Rows from ``start`` on: the weights' columns in the keys' new order (for causal weights, returned either
    way round: a square matrix's layout is the shapes check's to charge), or the output as it was."""
    order, start = kept
    (out, w), (out2, w2) = answers[0], answers[1]
    if part == 0:
        return _same(out2[start:], out[start:])
    return any(_same(b[start:], a[start:][:, order]) for a, b in ((w, w2), (w.T, w2.T) if start else (w, w2)))


def _relation(name, said, derive, weights, output) -> dict:
    """One relation for each part of an answer: (output, weights)[part] must satisfy ``(weights, output)``."""
    return {(name, 1): Relation(name, said[1], derive, weights), (name, 0): Relation(name, said[0], derive, output)}


ATTENTION = {
    **_relation("queries-matter", ("the same output for different inputs (a new Q of the same shape)",
                                   "the same weights for different inputs (a new Q of the same shape)"), _new_q,
                lambda case, a, kept: not _same(a[1][1], a[0][1]), lambda case, a, kept: not _same(a[1][0], a[0][0])),
    **_relation("scale-values", (f"an output that is not {ALPHA:g} times as large when V is",
                                 "weights that change with V (they come from Q and K)"), _scaled_v,
                lambda case, a, kept: _same(a[1][1], a[0][1]), lambda case, a, kept: _same(a[1][0], ALPHA * a[0][0])),
    **_relation("shift-scores", tuple(f"{part} when the same constant is added to every score (Q and K given one "
                                      f"more column, {SHIFT:g} and 1, against 0 and 1)"
                                      for part in ("another output", "other weights")), _shifted,
                lambda case, a, kept: _same(a[2][1], a[1][1]), lambda case, a, kept: _same(a[2][0], a[1][0])),
    **_relation("nudged", ("another output for Q and K moved by a part in 10**9 (a computation is continuous there)",
                           "other weights for Q and K moved by a part in 10**9 (a computation is continuous there)"),
                _nudged, lambda case, a, kept: _same(a[1][1], a[0][1]), lambda case, a, kept: _same(a[1][0], a[0][0])),
    **_relation("permute-keys", ("an output that changes when the keys and values come in another order",
                                 "weights whose columns do not follow the keys when the keys and values come in another "
                                 "order"), _permuted,
                lambda case, a, kept: _permutes(case, a, kept, 1), lambda case, a, kept: _permutes(case, a, kept, 0)),
    **_relation("permute-past-keys", ("an output after them that changes when the first keys and values come in "
                                      "another order", "weights whose columns do not follow the keys when the first keys "
                                      "and values come in another order"),
                lambda case, rng: _permuted(case, rng, past=True),
                lambda case, a, kept: _permutes(case, a, kept, 1), lambda case, a, kept: _permutes(case, a, kept, 0)),
}


# --- softmax ------------------------------------------------------------------------------------------

def _rotated(x) -> np.ndarray:
    return np.roll(np.arange(np.shape(x)[-1]), 1)


SOFTMAX = {
    "input-matters": Relation("input-matters", "the same values for different inputs (another x of the same shape)",
                              lambda case, rng: ([(case[0] + rng.normal(0, 1, case[0].shape),)], None),
                              lambda case, a, kept: not _same(a[1], a[0])),
    "permute-along-axis": Relation("permute-along-axis", "values that do not follow x when its entries along the "
                                   "last axis come in another order",
                                   lambda case, rng: ([(case[0][..., _rotated(case[0])],)], None),
                                   lambda case, a, kept: _same(a[1], a[0][..., _rotated(case[0])])),
    "nudged": Relation("nudged", "other values for x moved by a part in 10**9 (a computation is continuous there)",
                       lambda case, rng: ([(_nudge(case[0], rng),)], None), lambda case, a, kept: _same(a[1], a[0])),
    "shift-input": Relation("shift-input", f"other values for x + {SHIFT:g} (the same constant added everywhere)",
                            lambda case, rng: ([(case[0] + SHIFT,)], None), lambda case, a, kept: _same(a[1], a[0])),
}


# function -> the relations every computing implementation satisfies: each tuple's, or one of each tuple of them
# (attention: for each part of the answer, 1 the weights and 0 the output, as ``(name, part)``)
_NON_CAUSAL = (("queries-matter",), ("scale-values",), ("nudged",), ("shift-scores", "permute-keys"))
_CAUSAL = (("queries-matter",), ("scale-values",), ("nudged",), ("shift-scores", "permute-past-keys"))
EVIDENCE = {"scaled_dot_product_attention": _NON_CAUSAL, "cross_attention": _NON_CAUSAL, "causal_attention": _CAUSAL,
            "softmax": (("input-matters",), ("permute-along-axis",), ("nudged",))}
RELATIONS = {**ATTENTION, **SOFTMAX}


def relation(name: str, part: int | None) -> Relation:
    """The relation ``name`` (for attention, as it reads ``part`` of an answer)."""
    return RELATIONS[name] if part is None else RELATIONS[(name, part)]
