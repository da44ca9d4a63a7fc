"""tolerance.allclose: numpy's np.allclose verdict on every input, by its own short path on the grader's arrays
(issue 40: np.allclose's argument handling cost three times its element test on the rubric's small arrays)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from autograder import tolerance
from autograder.tolerance import ATOL, HALF_TOL, RTOL, HalfPrecision, allclose, close, same_values

SPECIAL = [0.0, -0.0, 1.0, -1.0, 1e-7, 1e300, -1e300, np.inf, -np.inf, np.nan, 5e-324]


def _pairs(rng):
    """(a, b) pairs: random, nearly equal, equal, with special values in the same or other places, other dtypes,
    shapes that broadcast, 0-d, a HalfPrecision view."""
    for _ in range(60):
        shape = tuple(rng.integers(1, 5, size=rng.integers(0, 3)))
        b = rng.normal(size=shape) * 10.0 ** rng.integers(-8, 8)
        a = b + rng.normal(size=shape) * 10.0 ** rng.integers(-12, 1)
        yield a, b
        yield b.copy(), b
        c, d = a.copy(), b.copy()
        for arr in (c, d):
            flat = arr.reshape(-1)
            if flat.size:
                flat[rng.integers(flat.size)] = SPECIAL[rng.integers(len(SPECIAL))]
        yield c, d
        yield c, c.copy()
        yield a.astype(np.float32), b
        yield a, b.astype(np.float16)
        yield np.round(a).astype(np.int64), b
        yield a > 0, b
        yield a, b.reshape(-1)[:1]                      # broadcasts
        yield a.view(HalfPrecision), b.view(HalfPrecision)
    for x, y in itertools.product(SPECIAL, repeat=2):
        yield np.array(x), np.array(y)
        yield np.array([x, 1.0]), np.array([y, 1.0])


@pytest.mark.parametrize("equal_nan", [False, True])
@pytest.mark.parametrize("tol", [(RTOL, ATOL), (HALF_TOL, HALF_TOL), (0.0, 0.0), (1e-5, 1e-8)])
def test_allclose_gives_numpys_verdict(equal_nan, tol):
    rng = np.random.default_rng(40)
    rtol, atol = tol
    with np.errstate(all="ignore"):
        for a, b in _pairs(rng):
            want = bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))
            assert allclose(a, b, rtol, atol, equal_nan=equal_nan) is want, (a, b, rtol, atol, equal_nan)


def test_allclose_leaves_other_inputs_to_numpy():
    assert allclose([1.0, 2.0], [1.0, 2.0], RTOL, ATOL) is True            # lists
    assert allclose(np.ones(3), 1, RTOL, ATOL) is True                      # a scalar
    assert allclose(np.arange(3), np.arange(3), RTOL, ATOL) is True         # integer b
    with pytest.raises(ValueError):
        allclose(np.ones(2), np.ones(3), RTOL, ATOL)                        # shapes that do not broadcast, as numpy


def test_allclose_warns_no_more_than_numpy(recwarn):
    """inf - inf and NaN comparisons are silent, as in np.isclose (which ignores 'invalid')."""
    with np.errstate(all="warn"):
        allclose(np.array([np.inf, np.nan]), np.array([np.inf, 1.0]), RTOL, ATOL, equal_nan=True)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_the_grader_s_comparisons_take_the_short_path(monkeypatch):
    """close and same_values on float arrays do not call np.allclose (the cost issue 40 measured)."""
    def refused(*args, **kwargs):
        raise AssertionError("np.allclose called")
    monkeypatch.setattr(tolerance.np, "allclose", refused)
    a = np.linspace(0, 1, 12).reshape(3, 4)
    assert close(a, a + 1e-9) and not close(a, a + 1)
    assert same_values(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    assert close(a.astype(np.float16).astype(float).view(HalfPrecision), a)


def test_all_close_is_close_of_every_pair():
    """all_close (one element test per tolerance) gives the verdict of close on each pair, all of them: random,
    special values, HalfPrecision (another tolerance), other dtypes and shapes; and one wrong pair among many right
    ones of either tolerance fails it."""
    rng = np.random.default_rng(41)
    pairs = [(a, b) for a, b in _pairs(rng) if np.shape(a) == np.shape(b) or rng.random() < 0.1]
    with np.errstate(all="ignore"):
        for _ in range(400):
            chosen = [pairs[i] for i in rng.choice(len(pairs), size=int(rng.integers(0, 6)), replace=False)]
            want = all(close(a, b) for a, b in chosen)
            assert tolerance.all_close(chosen) is want, chosen
    right = [(np.full(3, 1.0), np.full(3, 1.0 + 1e-9)), (np.ones(2).view(HalfPrecision), np.full(2, 1.004))]
    assert tolerance.all_close(right * 5)
    assert not tolerance.all_close(right * 5 + [(np.ones(2).view(HalfPrecision), np.full(2, 1.05))])
    assert not tolerance.all_close(right * 5 + [(np.ones(2), np.full(2, 1.001))])
    assert not tolerance.all_close(right + [(np.ones(2), np.ones(3))])
