"""The coverage table: which properties of the inputs apply to which function, declared once (issue 37, item 2).

Every function that has a property draws hidden cases from it: a check's questions say which property they
draw (``Question.draws``), and tests/grading/test_coverage.py fails when a property applies to a function and
no check of the rubric draws it. The cases that are built the same way for every function that has them
(``case``) are built here; the others (a size of 1, the state probe, the axes, n_q != n_k) by the check that
owns them, tagged with the property.
"""
from __future__ import annotations

import numpy as np

from .asking import Question

PROPERTIES = {
    "large": "large scores or inputs, where exp() overflows unless the maximum is subtracted",
    "row-offsets": "rows thousands apart from one another, each spread over a few units: stability is per row "
                   "(a softmax that turns into a hardmax, or subtracts one maximum for the whole array, fails)",
    "ties": "ties: equal inputs or scores, which must get equal weights",
    "one-d": "a 1-D input",
    "batch": "more than two axes, and any axis",
    "integer": "inputs of an integer dtype",
    "float32": "float32 inputs",
    "float16": "float16 inputs",
    "size-one": "a size of 1 in each dimension (n = 1)",
    "rectangular": "as many keys as queries, and not (n_q != n_k)",
    "defaults-after": "the default arguments, right after a call with other values",
    "same-id": "fresh arrays with an old id() (what a cache keyed on id() gets wrong)",
    "call-order": "the same inputs again after other calls (state kept between calls)",
}

_ARRAYS = ("ties", "integer", "float32", "float16", "same-id", "call-order", "size-one")
APPLIES = {
    "softmax": ("large", "row-offsets", "one-d", "batch", "defaults-after", *_ARRAYS),
    "scaled_dot_product_attention": ("large", "rectangular", *_ARRAYS),
    "cross_attention": ("large", "rectangular", *_ARRAYS),
    "causal_attention": ("large", *_ARRAYS),
    "causal_mask": ("size-one", "call-order"),
    "attention_memory_bytes": ("large", "defaults-after", "call-order"),
    "ffn_memory_bytes": ("large", "defaults-after", "call-order"),
    "crossover_length": ("large", "defaults-after", "call-order"),
}
CASES = ("ties", "integer", "float32", "float16", "same-id")       # built here, for an array function
LARGE = {"softmax": 1e4, "attention": 300.0}                      # inputs (softmax) or Q and K (attention) times this


def cases(function: str, base: tuple, rng, props=CASES) -> list[Question]:
    """The questions of each property in ``props`` for ``function``, built like ``base`` (its inputs)."""
    return [q for prop in props for q in case(function, prop, base, rng)]


def case(function: str, prop: str, base: tuple, rng) -> list[Question]:
    """The questions that draw ``prop`` for ``function``: one input (two for same-id: fresh inputs, then other
    values written into those very arrays)."""
    if prop == "same-id":
        first = tuple(rng.normal(0, 1, np.shape(a)) for a in base)
        second = tuple(rng.normal(0, 1, np.shape(a)) for a in base)
        return [Question(function, first), Question(function, second, into=-1, draws=prop)]
    return [Question(function, _BUILD[prop](function, base, rng), draws=prop)]


def _ties(function, base, rng):
    """softmax: rows of repeated values and one constant row; attention: a query of zeros (every score 0) and
    two equal keys."""
    if function == "softmax":
        x = np.round(np.asarray(base[0]), 0)
        x[(0,) * (x.ndim - 1)] = 1.5
        return (x,)
    Q, K, V = (np.array(a, dtype=float) for a in base)
    Q[0] = 0.0
    K[-1] = K[0]
    return Q, K, V


def _integer(function, base, rng):
    return tuple(rng.integers(-3, 4, np.shape(a)) for a in base)


def _cast(dtype):
    return lambda function, base, rng: tuple(np.asarray(a).astype(dtype) for a in base)


def _large(function, base, rng):
    """softmax: x 1e4 times larger; attention: Q and K 300 times larger. Causal attention: keys equal to the
    queries, each of one length, so every row's largest score (about 1e4) is on the diagonal, which it sees:
    exp() of unshifted scores overflows there, and a softmax taken before the mask and renormalised after it
    (right, if fragile) still holds."""
    if function == "softmax":
        return (np.asarray(base[0]) * LARGE["softmax"],)
    Q, K, V = base
    if function != "causal_attention":
        return Q * LARGE["attention"], K * LARGE["attention"], V
    return diagonal_large(Q), diagonal_large(Q), V


def row_offsets(x, rng) -> np.ndarray:
    """x (ordinary values, on a grid of 1/256) with each row moved by its own whole offset, thousands apart (signs
    mixed): the softmax of every row is that of the row near 0, so a right one gives it back, unchanged by the
    offsets. The sums are exact in float32 (up to 2**15 on that grid), so a float32 softmax is right too."""
    x = np.round(np.asarray(x, dtype=float) * 256) / 256
    rows = int(np.prod(x.shape[:-1]))
    offsets = rng.permutation(np.arange(rows) - rows // 2) * np.round(rng.uniform(2e3, 4e3))
    return x + offsets.reshape(*x.shape[:-1], 1)


def diagonal_large(Q, score: float = 1e4) -> np.ndarray:
    """Q's rows scaled to one length, so that Q Q^T / sqrt(d_k) is ``score`` on the diagonal and less elsewhere."""
    Q = np.asarray(Q, dtype=float)
    norms = np.linalg.norm(Q, axis=1, keepdims=True)
    return Q / np.where(norms > 0, norms, 1.0) * np.sqrt(score * np.sqrt(Q.shape[1]))


_BUILD = {"ties": _ties, "integer": _integer, "float32": _cast(np.float32), "float16": _cast(np.float16),
          "large": _large}


def as_float64(args: tuple) -> tuple:
    """The inputs as the reference reads them: every array in float64 (a float16 or integer input's values)."""
    return tuple(np.asarray(a, dtype=np.float64) if isinstance(a, np.ndarray) else a for a in args)
