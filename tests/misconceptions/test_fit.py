"""Families as regions of fitted parameters (issue 37, item 1): misconceptions/fit.py.

The knobs are read off designed probes whatever the spelling, dtype or failure mode: the scale of a float16
answer, exp() raising OverflowError where numpy gives inf, a shift by the median instead of the maximum.
"""
import math

import numpy as np
import pytest

import solutions as S
from autograder.grading.asking import Question, in_process
from autograder.grading.student import NotebookFunctions, to_array, to_pair
from autograder.misconceptions import diagnose
from autograder.misconceptions.fit import attention_knobs, fit_inputs, fitted

SDPA = "scaled_dot_product_attention"


def _probe(name, fn):
    student = NotebookFunctions({name: fn})
    read = to_array if name == "softmax" else to_pair

    def probe(arg_list):
        out = []
        for reply in in_process(student, name, [Question(name, a) for a in arg_list]):
            try:
                out.append(read(reply.get(), name))
            except Exception as exc:  # noqa: BLE001 - a failed call is an answer
                out.append(exc)
        return out
    return probe


def scale_by_dk_float16(Q, K, V):
    Q, K, V = (np.asarray(a, dtype=np.float16) for a in (Q, K, V))
    s = Q @ K.T / np.float16(Q.shape[-1])
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return w @ V, w


def softmax_math_exp(x, axis=-1):
    x = np.moveaxis(np.asarray(x, dtype=float), axis, -1)
    out = np.empty_like(x)
    for idx in np.ndindex(*x.shape[:-1]):
        e = [math.exp(v) for v in x[idx]]
        out[idx] = [v / sum(e) for v in e]
    return np.moveaxis(out, -1, axis)


def softmax_median_shift(x, axis=-1):
    e = np.exp(x - np.median(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("seed", range(4))
def test_a_float16_answer_is_fitted_to_its_scale_whatever_the_probes(seed):
    """On d_k = 2 the probes' 1/d_k and some 1/sqrt(d_v) lie 10 % apart: the scale's window is float16's own
    precision, not ten times it (seeds 1 and 3 fitted nothing with a window of 20 %)."""
    rng = np.random.default_rng(seed)
    args = (rng.normal(size=(3, 2)), rng.normal(size=(5, 2)), rng.normal(size=(5, 4)))
    probe = _probe(SDPA, scale_by_dk_float16)
    inputs = fit_inputs(SDPA, args)[0]
    assert attention_knobs(SDPA, inputs, probe(inputs))["scale"] == "dk"
    assert diagnose(SDPA, args, probe([args])[0], probe).id == "scale-by-dk"


@pytest.mark.parametrize("fn", [softmax_math_exp, softmax_median_shift])
def test_exp_of_unshifted_inputs_is_one_region_whatever_its_failure(fn):
    x = np.random.default_rng(3).normal(size=(3, 5)) * 1e4
    probe = _probe("softmax", fn)
    value = probe([(x,)])[0]
    assert isinstance(value, Exception) or not np.all(np.isfinite(value))
    assert fitted("softmax", (x,), probe, value).id == "no-max-subtraction"


@pytest.mark.parametrize("name", ["softmax", SDPA, "causal_attention", "cross_attention"])
def test_the_right_computation_fits_no_wrong_knob(name):
    rng = np.random.default_rng(5)
    args = (rng.normal(size=(3, 4)),) if name == "softmax" else (
        rng.normal(size=(4, 3)), rng.normal(size=(4 if name == "causal_attention" else 6, 3)),
        rng.normal(size=(4 if name == "causal_attention" else 6, 2)))
    fn = getattr(S, name)
    probe = _probe(name, fn)
    assert fitted(name, args, probe, probe([args])[0]) is None
