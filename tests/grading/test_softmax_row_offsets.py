"""The stability point holds per row: the coverage table's ``row-offsets`` case (rows thousands apart, each
spread over a few units) catches a softmax that turns into a hardmax once its input spans far, which inputs
near 1e4 (a hardmax is right there, to float precision) and ordinary inputs never show."""
import numpy as np
import pytest

import solutions
from autograder.grading.coverage import row_offsets
from autograder.grading.namespace import run_cell


def hardmax_beyond_100(x, axis=-1):
    """Our own spelling: past |x| = 100 "exp overflows", so the largest entry of each slice takes it all."""
    x = np.asarray(x, dtype=float)
    if np.abs(x).max() > 100:
        return (x == x.max(axis=axis, keepdims=True)).astype(float)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _points(softmax, student):
    return {r.check: r for r in run_cell({"softmax": softmax}, "ex1_softmax", student)}


@pytest.mark.parametrize("student", ["ada", "bo", "cy"])
def test_a_hardmax_on_spread_inputs_loses_the_stability_point_alone(student):
    got = _points(hardmax_beyond_100, student)
    assert got["rows_sum_to_one"].passed and got["any_axis"].passed
    stable = got["stable_for_large_inputs"]
    assert not stable.passed and stable.points == 0
    assert stable.diagnosis is None and stable.stage == "softmax"          # localised, named as nothing
    assert "rows thousands apart" in stable.message and "own maximum" in stable.message


@pytest.mark.parametrize("student", ["ada", "bo", "cy"])
def test_the_reference_keeps_the_stability_point(student):
    assert all(r.passed for r in _points(solutions.softmax, student).values())


def test_row_offsets_leave_the_softmax_of_every_row():
    rng = np.random.default_rng(3)
    x = rng.normal(0, 1, (4, 6))
    moved = row_offsets(x, rng)
    spans = np.sort(moved.mean(axis=1))
    assert np.all(np.diff(spans) > 1000)                                   # thousands apart
    near_zero = np.round(x * 256) / 256                                     # the grid the rows are put on
    assert np.allclose(solutions.softmax(moved), solutions.softmax(near_zero))
    exact32 = moved.astype(np.float32).astype(float)                      # float32 holds the moved rows exactly
    assert np.array_equal(exact32, moved)
