"""np.matrix, numpy's own 2-D class, is read as the plain array of its numbers (``sandbox.convert``, which the
worker and in-process grading share); any other ndarray subclass is still refused with a clear message."""
import numpy as np
import pytest

from autograder.grading.namespace import run_cell
from autograder.sandbox.convert import plain


def matrix_attention(Q, K, V):
    """Our own spelling: np.asmatrix and `*` as the matrix product, the results left as np.matrix."""
    Q, K, V = np.asmatrix(Q), np.asmatrix(K), np.asmatrix(V)
    s = (Q * K.T) / np.sqrt(K.shape[1])
    w = np.exp(s - s.max(axis=1))
    w = w / w.sum(axis=1)
    return w * V, w


class Tagged(np.ndarray):
    pass


def test_a_matrix_attention_gets_every_point_in_process():
    results = run_cell({"scaled_dot_product_attention": matrix_attention}, "ex1_attention", "mat")
    assert [r.message for r in results if not r.passed] == []


def test_a_matrix_is_read_as_its_numbers():
    m = np.asmatrix(np.arange(6.0).reshape(2, 3))
    kind, got = plain(m, 1 << 20)
    assert kind != "refused" and type(got) is np.ndarray and np.array_equal(got, np.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize("value", [np.zeros((2, 2)).view(Tagged), np.ma.masked_array(np.zeros(3))])
def test_other_subclasses_are_still_refused(value):
    kind, said = plain(value, 1 << 20)
    assert kind == "refused" and "subclass of numpy.ndarray" in said
