"""convert.plain's direct path (issue 40): a plain ndarray or a short tuple of them, in a dtype the wire carries, is
read as the general path (``_node`` then ``_rebuild``) reads it: the same values, dtypes, layouts, fresh copies."""
from __future__ import annotations

import numpy as np
import pytest

from autograder.sandbox import convert
from autograder.sandbox.convert import plain
from autograder.sandbox.rpc import ALLOWED_DTYPES

MAX = 1 << 20


def _general(value, max_bytes=MAX):
    arrays: list = []
    try:
        tree = convert._node(value, arrays, depth=0, count=[0])
        convert._check_size(arrays, max_bytes)
    except convert.Refused as exc:
        return "refused", str(exc)
    return "ok", convert._rebuild(tree, [np.array(a, copy=True) for a in arrays], 0, [0])


def _values():
    base = np.arange(12.0).reshape(3, 4)
    for dtype in sorted(ALLOWED_DTYPES):
        yield base.astype(dtype)
    yield np.asfortranarray(base)
    yield base.T
    yield np.array(3.5)
    yield (base, base.T)
    yield (base,)
    yield (base, base, base, base)
    yield (base, base, base, base, base)               # five: the general path
    yield [base, base]                                  # a list: the general path
    yield base.astype(np.float32).astype(">f4")         # another byte order: converted by the general path
    yield np.zeros(MAX // 8 + 1)                        # over the size limit: refused


@pytest.mark.parametrize("value", list(_values()), ids=lambda v: type(v).__name__)
def test_plain_reads_as_the_general_path(value):
    kind, got = plain(value, MAX)
    want_kind, want = _general(value)
    assert kind == want_kind
    if kind == "refused":
        assert got == want
        return
    assert type(got) is type(want)
    for g, w, v in zip(*(x if isinstance(x, (tuple, list)) else (x,) for x in (got, want, value))):
        assert g.dtype == w.dtype and g.shape == w.shape and np.array_equal(g, w)
        assert g.flags.c_contiguous == w.flags.c_contiguous and g.flags.f_contiguous == w.flags.f_contiguous
        assert not np.shares_memory(g, v)


def test_the_common_answer_takes_the_direct_path(monkeypatch):
    def refused(*args, **kwargs):
        raise AssertionError("the general path was taken")
    monkeypatch.setattr(convert, "_node", refused)
    pair = (np.ones((2, 3)), np.ones((2, 2), dtype=np.float32))
    kind, got = plain(pair, MAX)
    assert kind == "ok" and len(got) == 2 and got[1].dtype == np.float32


def test_the_direct_path_counts_what_the_grader_holds_not_the_bytes_returned():
    """An int8 answer of 1000 numbers is 1000 bytes returned and 8000 held once read: past a 4000-byte cap it is
    refused in-process as the sandbox refuses it (the direct path once counted 1000 bytes and kept it)."""
    from autograder.sandbox.convert import plain
    kind, said = plain(np.ones(1000, dtype=np.int8), 4000)
    assert kind == "refused" and "as the grader reads it" in said
    assert plain(np.ones(500, dtype=np.int8), 4000)[0] == "ok"


@pytest.mark.parametrize("base, named", [("np.float64", "numpy.float64"), ("np.int32", "numpy.int32"),
                                         ("float", "float"), ("int", "int")])
def test_a_number_of_the_students_own_class_is_refused_saying_what_it_is(base, named):
    """A subclass of a number (numpy's or Python's) is refused as a subclass of that number, with what to return
    (it read "the result is a F; return a numpy array or a number", though it is one), in-process and on the
    wire alike."""
    from autograder.sandbox.convert import decode_many, encode_results
    namespace: dict = {"np": np}
    exec(f"class Funny({base}):\n    pass\nvalue = Funny(3)", namespace)
    kind, said = plain(namespace["value"], MAX)
    assert kind == "refused" and said == (f"the result is a Funny, a subclass of {named}; return a plain number "
                                          "(float(result))"), said
    reply, payload = encode_results([("ok", namespace["value"])], MAX)
    assert decode_many(reply, payload, 1)[0][2] == said
