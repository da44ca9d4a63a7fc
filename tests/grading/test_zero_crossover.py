"""A crossover of 0 whatever the arguments names its family (crossover-from-zero: a search from n = 0 stops at
once) only beside counts that compute: do-nothing code, whose every count is 0, is never named a misconception
(DESIGN rule 4). The same rule as a zero causal mask's (test_constant_mask.py)."""
import pytest

import solutions as S
from autograder.grading.namespace import run_cell


def search_from_zero(d_model, dtype_bytes=2, expansion=4):      # a search that starts where 0 >= 0 holds
    n = 0
    while S.attention_memory_bytes(n, dtype_bytes) < S.ffn_memory_bytes(n, d_model, dtype_bytes, expansion):
        n += 1
    return n


def zero(*args, **kwargs):
    return 0


def stub(*args, **kwargs):
    raise NotImplementedError()


def _crossover(space, student):
    return next(r for r in run_cell(space, "ex3_crossover", student) if r.check == "crossover_exact")


@pytest.mark.parametrize("counts", [zero, stub])
@pytest.mark.parametrize("student", ["kim", "lou"])
def test_a_zero_crossover_beside_counts_that_compute_nothing_is_not_named(counts, student):
    space = {"crossover_length": zero, "attention_memory_bytes": counts, "ffn_memory_bytes": counts}
    got = _crossover(space, student)
    assert not got.passed and got.points == 0 and got.diagnosis is None
    assert "0 whatever the arguments" in got.message


@pytest.mark.parametrize("crossover", [zero, search_from_zero])
@pytest.mark.parametrize("student", ["kim", "lou"])
def test_a_zero_crossover_beside_counts_that_count_is_crossover_from_zero(crossover, student):
    space = {"crossover_length": crossover, "attention_memory_bytes": S.attention_memory_bytes,
             "ffn_memory_bytes": S.ffn_memory_bytes}
    got = _crossover(space, student)
    assert not got.passed and got.diagnosis == "crossover-from-zero", got.message
