"""Memory and FLOP counts: why attention is O(n^2).

All byte counts are exact integers; the chapter reports them in decimal GB.
"""
from __future__ import annotations


def _positive_int(name, value):
    if isinstance(value, bool) or int(value) != value or value < 0:
        raise ValueError(f"{name} must be a non-negative integer; got {value!r}")
    return int(value)


def attention_memory_bytes(n: int, dtype_bytes: int = 2) -> int:
    """Bytes of one (n, n) score or weight matrix: n * n * dtype_bytes."""
    n, dtype_bytes = _positive_int("n", n), _positive_int("dtype_bytes", dtype_bytes)
    return n * n * dtype_bytes


def ffn_memory_bytes(n: int, d_model: int, dtype_bytes: int = 2, expansion: int = 4) -> int:
    """Bytes of the feed-forward hidden activation: n * expansion * d_model * dtype_bytes."""
    n, d_model = _positive_int("n", n), _positive_int("d_model", d_model)
    dtype_bytes, expansion = _positive_int("dtype_bytes", dtype_bytes), _positive_int("expansion", expansion)
    return n * expansion * d_model * dtype_bytes


def crossover_length(d_model: int, dtype_bytes: int = 2, expansion: int = 4) -> int:
    """Smallest n >= 1 with attention bytes >= FFN bytes.

    n^2 b >= n e d b  <=>  n >= e d, so the crossover is expansion * d_model
    (16384 for d_model = 4096); dtype_bytes cancels.
    """
    d_model, expansion = _positive_int("d_model", d_model), _positive_int("expansion", expansion)
    _positive_int("dtype_bytes", dtype_bytes)
    return max(1, expansion * d_model)


def attention_flops(n: int, d: int) -> int:
    """FLOPs of Q K^T plus weights V for n queries and keys of width d: 2 n^2 d each."""
    n, d = _positive_int("n", n), _positive_int("d", d)
    return 2 * (2 * n * n * d)


def memory_table(d_model: int = 4096, ns=(256, 1024, 4096, 16384, 65536), dtype_bytes: int = 2):
    """Rows (n, attention GB, FFN GB, ratio) in decimal GB, as the chapter prints them."""
    rows = []
    for n in ns:
        att = attention_memory_bytes(n, dtype_bytes)
        ffn = ffn_memory_bytes(n, d_model, dtype_bytes)
        rows.append((n, att / 1e9, ffn / 1e9, att / ffn))
    return rows
