"""The value codec: call arguments out to the worker, results back, as wire data (never pickle).

Worker side, ``encode_results`` turns whatever a student's function returned
into wire data or refuses it: only plain numeric values travel (exact ndarrays
of a numeric dtype, Python and numpy numbers, None, and tuples or lists of
those). A string travels as a marker (the grader only needs to say "that is a
string"). Everything else is refused with a message for the student.

Grader side, ``encode_calls`` packs the inputs and ``decode_many`` rebuilds
results from checked wire data: the worker is untrusted, so every node, index
and array is re-checked there and any surprise is a ``ProtocolError``.
"""
from __future__ import annotations

import numpy as np

from .limits import Received, held_bytes
from .rpc import ALLOWED_DTYPES, ProtocolError, check_array, pack_arrays

MAX_ITEMS = 100_000
MAX_DEPTH = 4
STRING_MARKER = "<a string>"


class Refused(Exception):
    """The value cannot be sent to the grader; the message says what to return instead."""


def encode_results(results: list, max_bytes: int, budget: tuple[int, int] | None = None) -> tuple[dict, bytes]:
    """Several calls' outcomes in one frame: each ("ok", value) or ("error", summary dict). ``budget``: the
    bytes the grader still accepts from this notebook and its total; a result past it is refused (the
    grader reads no frame longer than that). Sizes are what the grader holds once it reads the arrays
    (``limits.held_bytes``: 8 bytes a number), as the grader counts them."""
    arrays: list[np.ndarray] = []
    items = []
    for kind, value in results:
        if kind in ("error", "refused"):             # raised by the student's code, or refused as it was read
            items.append({"ok": False, "error": value, "raised": kind == "error"})
            continue
        start = len(arrays)
        try:
            tree = _node(value, arrays, depth=0, count=[0])
            _check_size(arrays, max_bytes)
            _check_budget(arrays, budget)
        except Refused as exc:
            del arrays[start:]
            items.append({"ok": False, "error": {"type": "Refused", "message": str(exc)}, "raised": False})
            continue
        items.append({"ok": True, "tree": tree})
    descs, payload = pack_arrays(arrays)
    return {"items": items, "arrays": descs}, payload


class Screen:
    """The worker's check of each answer as it is read, before the next call runs: refused there (its arrays
    dropped) when ``encode_results`` would refuse it, so a batch of answers never holds more than the budget."""

    def __init__(self, max_bytes: int, budget: tuple[int, int] | None):
        self.max_bytes, self.budget, self.used = max_bytes, budget, 0

    def __call__(self, value) -> tuple[str, object]:
        arrays: list[np.ndarray] = []
        try:
            _node(value, arrays, depth=0, count=[0])
            _check_size(arrays, self.max_bytes)
            if self.budget is not None:
                _check_budget(arrays, (self.budget[0] - self.used, self.budget[1]))
        except Refused as exc:
            return "refused", {"type": "Refused", "message": str(exc)}
        self.used += _held(arrays)
        return "ok", value


def _held(arrays: list) -> int:
    return sum(held_bytes(a.size) for a in arrays)


def plain(value, max_bytes: int) -> tuple[str, object]:
    """In-process, what the wire would carry of ``value``: ("ok", the value rebuilt from copies of its arrays,
    a string as the marker) or ("refused", why), the same verdicts and messages as ``encode_results`` and
    ``decode_many`` give a sandboxed call, without the bytes."""
    arrays = _plain_arrays(value)
    if arrays is not None and _held(arrays) <= max_bytes:       # the common answer, read directly
        copies = [np.array(a, copy=True) for a in arrays]
        return "ok", copies[0] if type(value) is np.ndarray else tuple(copies)
    arrays = []
    try:
        tree = _node(value, arrays, depth=0, count=[0])
        _check_size(arrays, max_bytes)
    except Refused as exc:
        return "refused", str(exc)
    return "ok", _rebuild(tree, [np.array(a, copy=True) for a in arrays], 0, [0])


def _plain_arrays(value) -> list | None:
    """The arrays of a plain ndarray or a tuple of at most four, each in a dtype the wire carries as it is (what
    ``_node`` and ``_rebuild`` give back unchanged but copied), else None."""
    items = [value] if type(value) is np.ndarray else value if type(value) is tuple and len(value) <= 4 else ()
    if items and all(type(a) is np.ndarray and a.dtype.str in ALLOWED_DTYPES for a in items):
        return list(items)
    return None


def _check_size(arrays: list, max_bytes: int) -> None:
    total = _held(arrays)
    if total > max_bytes:
        raise Refused(f"the result takes {total >> 20} MiB as the grader reads it (8 bytes a number), more than "
                      f"the {max_bytes >> 20} MiB the grader accepts from one answer; return only the arrays the "
                      "exercise asks for")


def _check_budget(arrays: list, budget: tuple[int, int] | None) -> None:
    """Refused past what is left of the notebook's results, saying this answer's own size: one answer as large
    as all a notebook may return is said to be that (an 8 MiB int8 answer, 64 MiB once read, was told only that
    the notebook's functions had returned more than 64 MiB in all), else what was left."""
    held = _held(arrays)
    if budget is None or held <= budget[0]:
        return
    size = f"the result takes {_mib(held)} as the grader reads it (8 bytes a number)"
    if held >= budget[1]:
        raise Refused(f"{size}, as much as the grader accepts from one notebook's functions in all ({_mib(budget[1])});"
                      " return only the arrays the exercise asks for")
    raise Refused(f"the notebook's functions have returned more data than the grader accepts from one notebook "
                  f"({budget[1] >> 20} MiB of results in all): {size} and {_mib(budget[0])} was left; return only "
                  "the arrays the exercise asks for")


def _mib(nbytes: int) -> str:
    return f"{nbytes >> 20} MiB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KiB"


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
    if type(value) is np.matrix:                  # numpy's own 2-D class (`*` is the matrix product): its numbers
        value = value.view(np.ndarray)            # read as the plain array they are, as np.asarray would
    if isinstance(value, np.ndarray) and type(value) is not np.ndarray:
        raise Refused(f"the result is {_a(type(value).__name__)}, a subclass of numpy.ndarray; "
                      "return a plain numpy array (np.asarray(result))")
    if type(value) is np.ndarray:
        arr = value
    elif type(value) in (bool, int, float) or (isinstance(value, np.generic) and type(value).__module__ == "numpy"):
        arr = np.asarray(value)
    elif isinstance(value, (int, float, np.generic)):        # a class of the student's own, made from a number
        raise Refused(f"the result is {_a(type(value).__name__)}, a subclass of {_number_base(value)}; return a "
                      "plain number (float(result))")
    else:
        raise Refused(f"the result is {_a(type(value).__name__)}; return a numpy array or a number")
    arrays.append(_wire_dtype(arr))
    return len(arrays) - 1


def _number_base(value) -> str:
    """The number type a student's subclass was made from: numpy's (numpy.float64) or Python's (float)."""
    for base in type(value).__mro__[1:]:
        if base.__module__ == "numpy" and issubclass(base, np.generic):
            return f"numpy.{base.__name__}"
        if base in (int, float):
            return base.__name__
    return "a number"


def _a(kind: str) -> str:
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}"


def _wire_dtype(arr: np.ndarray) -> np.ndarray:
    """A real number array in a dtype the wire carries: every integer and float dtype numpy has is
    accepted, as in-process. Another byte order becomes the native one, and a float the wire does
    not carry (long double, float128) becomes float64, as the grader reads every answer anyway."""
    if arr.dtype.str in ALLOWED_DTYPES:
        return arr
    if arr.dtype.kind in "biuf":
        native = arr.dtype.newbyteorder("=")
        return arr.astype(native if native.str in ALLOWED_DTYPES else np.float64)
    what = "complex numbers" if arr.dtype.kind == "c" else f"dtype {arr.dtype}"
    raise Refused(f"the result holds {what}; return real numbers (a float or integer array)")


# --- grader side ---------------------------------------------------------------------------

def encode_calls(calls) -> tuple[list[dict], bytes]:
    """Several (args, kwargs) with their arrays in one shared payload."""
    arrays: list = []
    encoded = [{"args": [_enc(a, arrays) for a in args], "kwargs": {k: _enc(v, arrays) for k, v in kw.items()}}
               for args, kw in calls]
    descs, payload = pack_arrays(arrays)
    fix = lambda v: descs[v["array"]] if isinstance(v, dict) else v  # noqa: E731
    return [{"args": [fix(a) for a in c["args"]], "kwargs": {k: fix(v) for k, v in c["kwargs"].items()}}
            for c in encoded], payload


def _enc(a, arrays: list):
    if isinstance(a, np.ndarray):
        arrays.append(a)
        return {"array": len(arrays) - 1}
    if isinstance(a, (bool, int, float, str)) or a is None:
        return a
    raise TypeError(f"cannot send {type(a).__name__} to the worker")


def decode_many(many, payload: bytes, count: int, received: Received | None = None) -> list:
    """Per call: ("ok", value) or ("raised" | "refused", type, message, where, missing, late); exactly ``count``.
    ``late``: the worker itself ended the call at its time (or did not ask it), which no student code can say.

    ``where`` is the notebook function the exception was raised in and ``missing`` the name a NameError
    did not find; each is a Python identifier or None. ``received``: the notebook's budget, charged with
    what the arrays cost once read (``limits.held_bytes``) before any is made; results past what is left
    are a ``ProtocolError`` (the worker was told what is left, and refuses a result past it)."""
    if not isinstance(many, dict) or not isinstance(many.get("items"), list) \
            or not isinstance(many.get("arrays"), list):
        raise ProtocolError("the results are not an object with items and arrays")
    items, descs = many["items"], many["arrays"]
    if len(items) != count:
        raise ProtocolError(f"{len(items)} results for {count} calls")
    if len(descs) > MAX_ITEMS * max(count, 1):
        raise ProtocolError("too many arrays")
    described = [check_array(d, payload) for d in descs]
    if received is not None:
        _charge(received, sum(held_bytes(elements) for *_, elements in described))
    arrays = [np.frombuffer(payload, dtype=dt, count=n, offset=at).reshape(shape).copy()
              for dt, shape, at, n in described]
    return [_item(item, arrays) for item in items]


def _charge(received: Received, held: int) -> None:
    if held > received.left:
        raise ProtocolError(f"results that take {held} bytes once read, more than the {received.left} left")
    received.charge(held)


def _item(item, arrays: list) -> tuple:
    if not isinstance(item, dict):
        raise ProtocolError("a result is not an object")
    if item.get("ok") is True:
        return "ok", _rebuild(item.get("tree"), arrays, 0, [0])
    err = item.get("error") if isinstance(item.get("error"), dict) else {}
    return ("raised" if item.get("raised") is True else "refused", str(err.get("type", "Error"))[:80],
            str(err.get("message", ""))[:500], _name(err.get("where")), _name(err.get("missing")),
            err.get("late") is True and item.get("raised") is True)


def _name(value) -> str | None:
    """A Python identifier from the worker (a function's name), or None."""
    return value if isinstance(value, str) and len(value) <= 80 and value.isidentifier() else None


def _rebuild(node, arrays, depth, count):
    count[0] += 1
    if depth > MAX_DEPTH + 1 or count[0] > MAX_ITEMS or not isinstance(node, dict):
        raise ProtocolError("bad value tree")
    kind = node.get("kind")
    if kind == "none":
        return None
    if kind == "str":
        return STRING_MARKER
    if kind in ("tuple", "list") and isinstance(node.get("items"), list):
        items = [_rebuild(n, arrays, depth + 1, count) for n in node["items"]]
        return tuple(items) if kind == "tuple" else items
    index = node.get("index")
    if kind == "array" and type(index) is int and 0 <= index < len(arrays):
        return arrays[index]
    raise ProtocolError("bad value tree")
