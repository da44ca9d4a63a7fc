"""Pick the array namespace once per call and validate inputs.

Numpy, CuPy and any array-API library (array-api-strict in the tests) are
accepted; plain Python lists become numpy arrays. CuPy is never imported here:
array-api-compat only looks at the type of arrays the caller passed.
"""
from __future__ import annotations

import numpy as np
from array_api_compat import array_namespace, is_array_api_obj, is_numpy_array


def as_arrays(*xs, names=None):
    """Return (xp, arrays): array-likes become numpy arrays, dtypes are checked."""
    if xs and all(type(x) is np.ndarray and x.dtype.kind == "f" for x in xs):
        return numpy_namespace(), list(xs)          # what the general path gives them, at a fraction of its cost
    names = names or [f"argument {i}" for i in range(len(xs))]
    arrays = [x if is_array_api_obj(x) else _numpy_from(x, name) for x, name in zip(xs, names)]
    xp = array_namespace(*arrays)
    arrays = [_float_array(xp, a, name) for a, name in zip(arrays, names)]
    return xp, arrays


def numpy_namespace():
    """The namespace ``array_namespace`` gives plain numpy arrays (array-api-compat's numpy), looked up once."""
    global _NUMPY
    if _NUMPY is None:
        _NUMPY = array_namespace(np.empty(0))
    return _NUMPY


_NUMPY = None


def _numpy_from(x, name):
    try:
        return np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} is not a numeric array ({exc})") from None


def _float_array(xp, a, name):
    """Integers become the default float; object, string and bool arrays are refused."""
    if is_numpy_array(a) and a.dtype.kind not in "iuf":
        raise ValueError(f"{name} has dtype {a.dtype}; pass a numeric (float) array")
    if xp.isdtype(a.dtype, "real floating"):
        return a
    if xp.isdtype(a.dtype, "integral"):
        return xp.astype(a, xp.float64 if _has_float64(xp) else xp.float32)
    raise ValueError(f"{name} has dtype {a.dtype}; pass a numeric (float) array")


def _has_float64(xp):
    return getattr(xp, "float64", None) is not None


def broadcast_shape(a: tuple, b: tuple) -> tuple | None:
    """The broadcast of two shapes, or None when they do not broadcast."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y) if 1 not in (x, y) else x * y)
    return tuple(reversed(out))


def check_attention_shapes(Q, K, V) -> None:
    """Raise ValueError naming the shapes when Q, K, V cannot be combined."""
    for name, a in (("Q", Q), ("K", K), ("V", V)):
        if a.ndim < 2:
            raise ValueError(f"{name} must be at least 2-D (..., n, d); got shape {tuple(a.shape)}")
    if K.shape[-1] != Q.shape[-1]:
        raise ValueError(f"K has d_k={K.shape[-1]} but Q has d_k={Q.shape[-1]}")
    if V.shape[-2] != K.shape[-2]:
        raise ValueError(f"V has n_k={V.shape[-2]} rows but K has n_k={K.shape[-2]}")
    for name, a in (("K", K), ("V", V)):
        if broadcast_shape(tuple(Q.shape[:-2]), tuple(a.shape[:-2])) is None:
            raise ValueError(
                f"batch axes of {name} {tuple(a.shape[:-2])} do not broadcast "
                f"with Q's {tuple(Q.shape[:-2])}"
            )
