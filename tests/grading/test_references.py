"""The grader's references are computed once per input and shared by the checks (issue 40, item 2)."""
import numpy as np
import pytest

import autograder
import solutions
from autograder.grading import references
from autograder.grading.references import memoised
from autograder.tolerance import HalfPrecision

ENGINE = {k: getattr(solutions, k) for k in dir(solutions) if callable(getattr(solutions, k)) and not k.startswith("_")}


def test_one_grading_asks_some_inputs_twice_and_computes_each_once():
    references._MEMO.clear()
    before = dict(references.STATS)
    autograder.grade_namespace(ENGINE, "shared-refs")
    asked = references.STATS["asked"] - before["asked"]
    computed = references.STATS["computed"] - before["computed"]
    assert 0 < computed < asked                       # measured: 94 asked, 74 computed for the right engine


def test_an_input_is_computed_once_and_each_caller_gets_its_own_copy():
    calls = []

    def engine(x, axis=-1):
        calls.append(1)
        return np.asarray(x, dtype=float) * 2
    ref = memoised(engine)
    x = np.arange(4.0)
    first = ref(x)
    first[0] = 99                                      # a caller changes what it got
    assert ref(x.copy())[0] == 0 and len(calls) == 1
    assert ref(x, axis=0) is not None and len(calls) == 2          # other arguments: another input
    ref(x.astype(np.float16)), ref(x.view(HalfPrecision))
    assert len(calls) == 4                                         # another dtype or type: another input


def test_an_engine_refusal_is_raised_again_each_time():
    ref = memoised(lambda x: 1 / 0)
    for _ in range(2):
        with pytest.raises(ZeroDivisionError):
            ref(np.zeros(2))
