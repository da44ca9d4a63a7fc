"""Worker side: turn whatever a student's function returned into wire data, or refuse it.

Only plain numeric values travel: exact ndarrays of a numeric dtype, Python
and numpy numbers, None, and tuples or lists of those. A string travels as a
marker (the grader only needs to say "that is a string"). Everything else is
refused with a message for the student. The grader re-checks all of it.
"""
from __future__ import annotations

import numpy as np

from .rpc import ALLOWED_DTYPES, pack_arrays

MAX_ITEMS = 100_000
MAX_DEPTH = 4


class Refused(Exception):
    """The value cannot be sent to the grader; the message says what to return instead."""


def encode_results(results: list, max_bytes: int) -> tuple[dict, bytes]:
    """Several calls' outcomes in one frame: each ("ok", value) or ("error", summary dict)."""
    arrays: list[np.ndarray] = []
    items = []
    for kind, value in results:
        if kind == "error":
            items.append({"ok": False, "error": value, "raised": True})
            continue
        start = len(arrays)
        try:
            tree = _node(value, arrays, depth=0, count=[0])
            _check_size(arrays, max_bytes)
        except Refused as exc:
            del arrays[start:]
            items.append({"ok": False, "error": {"type": "Refused", "message": str(exc)}, "raised": False})
            continue
        items.append({"ok": True, "tree": tree})
    descs, payload = pack_arrays(arrays)
    return {"items": items, "arrays": descs}, payload


def _check_size(arrays: list, max_bytes: int) -> None:
    total = sum(a.nbytes for a in arrays)
    if total > max_bytes:
        raise Refused(f"the result takes {total >> 20} MiB, more than the {max_bytes >> 20} MiB the "
                      "grader accepts; return only the arrays the exercise asks for")


def _node(value, arrays, depth, count):
    count[0] += 1
    if count[0] > MAX_ITEMS or depth > MAX_DEPTH:
        raise Refused("the result is a very large or deeply nested list; return a numpy array")
    if value is None:
        return {"kind": "none"}
    if isinstance(value, (str, bytes)):
        return {"kind": "str"}
    if type(value) in (tuple, list):
        return {"kind": type(value).__name__, "items": [_node(v, arrays, depth + 1, count) for v in value]}
    return {"kind": "array", "index": _array(value, arrays)}


def _array(value, arrays) -> int:
    if isinstance(value, np.ndarray) and type(value) is not np.ndarray:
        raise Refused(f"the result is a {type(value).__name__}, a subclass of numpy.ndarray; "
                      "return a plain numpy array (np.asarray(result))")
    if type(value) is np.ndarray:
        arr = value
    elif type(value) in (bool, int, float) or (isinstance(value, np.generic) and type(value).__module__ == "numpy"):
        arr = np.asarray(value)
    else:
        raise Refused(f"the result is a {type(value).__name__}; return a numpy array or a number")
    if arr.dtype.str not in ALLOWED_DTYPES:
        raise Refused(f"the result has dtype {arr.dtype}; return a numeric array (e.g. float64)")
    arrays.append(arr)
    return len(arrays) - 1
