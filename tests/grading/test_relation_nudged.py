"""The ``nudged`` relation (relations.py): inputs moved by a part in 10**9 give the same answer. An answer read off
the inputs' bytes (a checksum of each value or row, normalised along the axis and kept causal) follows a
permutation and changes with a new input, as a computation does, so it satisfied every other relation and kept
the property points (the axis honoured, stability, no future leakage, rows that sum to 1, the first row); it is
not continuous, and no computation of softmax or attention, right or wrong, fails to be."""
import hashlib

import numpy as np
import pytest

from autograder.grading.namespace import run_cell
from test_relations import _unproven


def _digest(b: bytes) -> float:
    return 1.0 + int.from_bytes(hashlib.blake2b(b, digest_size=4).digest(), "little") / 2**32


def digest_softmax(x, axis=-1):                 # each value's digest, normalised along the axis
    x = np.asarray(x, dtype=float)
    p = np.vectorize(lambda v: _digest(np.float64(v).tobytes()))(x)
    return p / p.sum(axis=axis, keepdims=True)


def digest_causal(Q, K, V):                     # a digest of each (query, key) pair over the past, rows normalised
    n = len(Q)
    w = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1):
            w[i, j] = _digest(np.ascontiguousarray(Q[i]).tobytes() + np.ascontiguousarray(K[j]).tobytes())
        w[i] /= w[i].sum()
    return w @ V, w


def test_answers_read_off_the_inputs_bytes_are_not_shown_to_compute():
    assert "moved by a part in 10**9" in _unproven("softmax", digest_softmax, None).said
    assert "moved by a part in 10**9" in _unproven("causal_attention", digest_causal, 1).said


@pytest.mark.parametrize("student", ["kim", "lou"])
def test_they_earn_no_property_point(student):
    softmax = {r.check: r.points for r in run_cell({"softmax": digest_softmax}, "ex1_softmax", student)}
    assert softmax["any_axis"] == 0 and softmax["stable_for_large_inputs"] == 0, softmax
    causal = {r.check: r.points for r in run_cell({"causal_attention": digest_causal}, "ex2_causal", student)}
    assert sum(causal.values()) == 0, causal
