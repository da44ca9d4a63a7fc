"""No false sentence in any failed message of the corpus (issue 37, item 4).

Every failed message the development corpus earns (one student) is read for the claims a fallback sentence makes
about what the student's code does, and each claim is checked here against the code itself, by calls of our own
(oracles that share nothing with the grader's diagnosis):

- "exp() overflows": on inputs whose scores run into the thousands, the function overflows (OverflowError, or a
  FloatingPointError under ``np.errstate(over="raise")``: exp() or a float16 cast past its largest number);
- "the `axis` argument is ignored": softmax gives the same values whatever axis a 3-D x is given;
- "does not compute its weights from Q and K" (output, values from x): the function is deterministic, and a new Q
  (a new x) or keys given in another order do not move its weights (values) as they should;
- "called twice with the same inputs" / "random numbers, or state": two calls with equal fresh inputs differ;
- "right with as many keys as queries": it is right where n_q = n_k;
- "cached on id(...)": new values written into the very arrays of a call give that call's answer;
- "come back transposed": the weights of a non-square input have shape (n_k, n_q) (causal: zeros below the
  diagonal).
"""
import functools
import re

import numpy as np
import pytest

import autograder
import solutions as S
from diagnosis_corpus import cases

STUDENT = "sentences-ada"
FUNCTION_OF = {"ex1_softmax": "softmax", "ex1_attention": "scaled_dot_product_attention",
               "ex2_causal": "causal_attention", "ex4_cross": "cross_attention"}
ATTENTION = ("scaled_dot_product_attention", "causal_attention", "cross_attention")


@functools.lru_cache(maxsize=None)
def _failed() -> tuple:
    out = []
    for case in cases():
        for c in autograder.grade_namespace(case.namespace(), STUDENT).checks:
            if not c.passed and c.grade_id in FUNCTION_OF:
                out.append((case, c.grade_id, c.check, c.message))
    return tuple(out)


def _call(fn, *args):
    try:
        with np.errstate(all="ignore"):
            return fn(*(np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args))
    except Exception as exc:  # noqa: BLE001 - a raise is an answer here
        return exc


def _inputs(name, rng, n_q=5, n_k=7, d_k=4, d_v=3):
    n_k = n_q if name == "causal_attention" else n_k
    return rng.normal(size=(n_q, d_k)), rng.normal(size=(n_k, d_k)), rng.normal(size=(n_k, d_v))


def _weights(name, answer):
    if isinstance(answer, Exception):
        return None
    return np.asarray(answer if name == "softmax" else answer[1], dtype=float)


def overflows(name, fn, rng) -> bool:
    if name == "softmax":
        args = (rng.normal(size=(3, 5)) * 1e4,)
    else:
        Q, K, V = _inputs(name, rng)
        args = (Q * 40, K * 40, V)
    try:
        with np.errstate(over="raise"):
            fn(*args)
    except (OverflowError, FloatingPointError):
        return True
    except Exception:  # noqa: BLE001 - another failure is no overflow
        return False
    return False


def ignores_axis(name, fn, rng) -> bool:
    x = rng.normal(size=(2, 3, 4))
    answers = [_call(fn, x, a) for a in (0, 1, 2)]
    if any(isinstance(a, Exception) for a in answers):
        return False
    return all(np.allclose(a, answers[0]) for a in answers)


def random(name, fn, rng) -> bool:
    args = (rng.normal(size=(3, 5)),) if name == "softmax" else _inputs(name, rng)
    one, two = _call(fn, *args), _call(fn, *args)
    a, b = _weights(name, one), _weights(name, two)
    return a is not None and b is not None and (a.shape != b.shape or not np.allclose(a, b, equal_nan=True))


def not_computed(name, fn, rng) -> bool:
    if random(name, fn, rng):
        return False                                 # it computes something, with randomness: another claim
    if name == "softmax":
        x = rng.normal(size=(3, 5))
        a, b = _weights(name, _call(fn, x)), _weights(name, _call(fn, x + rng.normal(size=x.shape)))
        return a is None or b is None or np.allclose(a, b)
    Q, K, V = _inputs(name, rng)
    w = _weights(name, _call(fn, Q, K, V))
    moved = _weights(name, _call(fn, rng.normal(size=Q.shape), K, V))
    if w is None or moved is None or w.shape != moved.shape or np.allclose(w, moved):
        return True
    if name == "causal_attention":
        return False
    p = rng.permutation(len(K))
    permuted = _weights(name, _call(fn, Q, K[p], V[p]))
    return permuted is None or permuted.shape != w.shape or not np.allclose(permuted, w[:, p])


def right_when_square(name, fn, rng) -> bool:
    args = _inputs(name, rng, n_q=6, n_k=6)
    got = _call(fn, *args)
    want = getattr(S, name)(*args)
    return not isinstance(got, Exception) and all(np.allclose(g, w) for g, w in zip(got, want))


def cached_on_id(name, fn, rng) -> bool:
    Q, K, V = _inputs(name, rng)
    first = fn(Q, K, V)
    first = tuple(np.array(a, copy=True) for a in first)
    Q[...], K[...], V[...] = (rng.normal(size=a.shape) for a in (Q, K, V))
    again = fn(Q, K, V)
    return all(np.allclose(a, b) for a, b in zip(first, again))


def transposed(name, fn, rng) -> bool:
    Q, K, V = _inputs(name, rng)
    answer = _call(fn, Q, K, V)
    if isinstance(answer, Exception):
        return False
    parts = [np.asarray(a, dtype=float) for a in answer]
    if name == "causal_attention":
        return any(a.shape == (len(Q), len(K)) and np.allclose(np.tril(a, -1), 0) and not np.allclose(a, np.diag(
            np.diag(a))) for a in parts)
    return any(a.shape == (len(K), len(Q)) for a in parts)


# the claims a sentence makes (a pattern in the message) and the oracle that must hold for it to be true
CLAIMS = [
    (re.compile(r"(?<!no )exp\(\) overflows|exp\(\) overflowed|exp\(\) of inputs this large overflows"), overflows),
    (re.compile(r"the `axis` argument is ignored"), ignores_axis),
    (re.compile(r"does not compute its (weights from Q and K|output from Q, K and V|values from x)[,:]"),
     not_computed),
    (re.compile(r"called twice with the same inputs|random numbers, or state"), random),
    (re.compile(r"right with as many keys as queries"), right_when_square),
    (re.compile(r"cached on id\("), cached_on_id),
    (re.compile(r"weights come back transposed"), transposed),
]


def _claims():
    out = []
    for case, grade_id, check, message in _failed():
        for pattern, oracle in CLAIMS:
            if pattern.search(message):
                out.append((case, grade_id, check, oracle, message))
    return out


def test_the_corpus_makes_every_kind_of_claim():
    """The oracles are exercised: each claim is made somewhere in the development corpus."""
    made = {oracle.__name__ for *_, oracle, _ in _claims()}
    assert made == {oracle.__name__ for _, oracle in CLAIMS}


def test_every_claim_of_a_failed_message_is_true_of_the_code():
    false = []
    for case, grade_id, check, oracle, message in _claims():
        name = FUNCTION_OF[grade_id]
        fn = case.namespace()[name]
        if not oracle(name, fn, np.random.default_rng(7)):
            false.append(f"{case.name} {grade_id}/{check}: {oracle.__name__}: {message[:200]}")
    assert false == []


@pytest.mark.parametrize("oracle, truthful, liar", [
    (overflows, lambda x, axis=-1: S.softmax(x, axis), lambda x, axis=-1: np.exp(x) / np.exp(x).sum(axis, keepdims=True)),
    (ignores_axis, lambda x, axis=-1: S.softmax(x, axis), lambda x, axis=-1: S.softmax(x, 1)),
    (random, lambda x, axis=-1: S.softmax(x, axis), lambda x, axis=-1: S.softmax(x + np.random.random(x.shape), axis)),
])
def test_each_softmax_oracle_tells_a_claim_from_its_opposite(oracle, truthful, liar):
    assert not oracle("softmax", truthful, np.random.default_rng(1))
    assert oracle("softmax", liar, np.random.default_rng(1))


def test_the_attention_oracles_tell_a_claim_from_its_opposite():
    rng = np.random.default_rng(2)
    right = S.scaled_dot_product_attention
    memo = {}

    def by_id(Q, K, V):
        return memo.setdefault((id(Q), id(K), id(V)), right(Q, K, V))

    def dropout(Q, K, V):
        out, w = right(Q, K, V)
        w = w * (np.random.random(w.shape) > 0.2)
        return w @ V, w
    for oracle in (not_computed, random, cached_on_id, transposed, overflows):
        assert not oracle("scaled_dot_product_attention", right, rng), oracle.__name__
    assert right_when_square("scaled_dot_product_attention", right, rng)
    assert cached_on_id("scaled_dot_product_attention", by_id, rng)
    assert random("scaled_dot_product_attention", dropout, rng) and not not_computed(
        "scaled_dot_product_attention", dropout, rng)
    assert transposed("scaled_dot_product_attention", lambda Q, K, V: (lambda o, w: (o, w.T))(*right(Q, K, V)), rng)
    assert not_computed("scaled_dot_product_attention", lambda Q, K, V: (V[:len(Q)] * 0 + 1, np.ones(
        (len(Q), len(K))) / len(K)), rng)
