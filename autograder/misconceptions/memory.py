"""Wrong ways to count activation memory (exercise 3)."""
from __future__ import annotations

from . import Misconception


def att_dtype_fixed(n, dtype_bytes=2):
    return n * n * 2


def att_dtype_dropped(n, dtype_bytes=2):
    return n * n


def att_linear(n, dtype_bytes=2):
    return n * dtype_bytes


def att_gb(n, dtype_bytes=2):
    return n * n * dtype_bytes / 1e9


def ffn_no_expansion(n, d_model, dtype_bytes=2, expansion=4):
    return n * d_model * dtype_bytes


def ffn_dtype_fixed(n, d_model, dtype_bytes=2, expansion=4):
    return n * expansion * d_model * 2


def ffn_dtype_dropped(n, d_model, dtype_bytes=2, expansion=4):
    return n * expansion * d_model


def ffn_gb(n, d_model, dtype_bytes=2, expansion=4):
    return n * expansion * d_model * dtype_bytes / 1e9


def crossover_plus_one(d_model, dtype_bytes=2, expansion=4):
    return expansion * d_model + 1


def crossover_minus_one(d_model, dtype_bytes=2, expansion=4):
    return expansion * d_model - 1


def crossover_no_expansion(d_model, dtype_bytes=2, expansion=4):
    return d_model


_DTYPE = "the result does not change with dtype_bytes; multiply by dtype_bytes (2 for fp16, 4 for fp32)."
_GB = "the result is in gigabytes; return the exact number of bytes (an integer)."
ENTRIES = [
    Misconception("dtype-ignored", "attention_memory_bytes", att_dtype_fixed, _DTYPE),
    Misconception("dtype-ignored", "attention_memory_bytes", att_dtype_dropped, _DTYPE),
    Misconception("linear-in-n", "attention_memory_bytes", att_linear,
                  "the count grows linearly in n; the score matrix is n x n, so it holds n * n values."),
    Misconception("bytes-as-gb", "attention_memory_bytes", att_gb, _GB),
    Misconception("expansion-missing", "ffn_memory_bytes", ffn_no_expansion,
                  "the FFN hidden layer is `expansion` times wider than d_model; multiply by expansion."),
    Misconception("dtype-ignored", "ffn_memory_bytes", ffn_dtype_fixed, _DTYPE),
    Misconception("dtype-ignored", "ffn_memory_bytes", ffn_dtype_dropped, _DTYPE),
    Misconception("bytes-as-gb", "ffn_memory_bytes", ffn_gb, _GB),
    Misconception("crossover-off-by-one", "crossover_length", crossover_plus_one,
                  "one past the crossover: at n = expansion * d_model the two are already equal, and the "
                  "crossover is the smallest n with attention >= FFN (use >=, not >)."),
    Misconception("crossover-off-by-one", "crossover_length", crossover_minus_one,
                  "one short: at n = expansion * d_model - 1 attention is still smaller than the FFN."),
    Misconception("expansion-missing", "crossover_length", crossover_no_expansion,
                  "the crossover ignores the FFN expansion; n^2 >= n * expansion * d_model gives "
                  "n = expansion * d_model."),
]
