"""Wrong ways to count activation memory (exercise 3)."""
from __future__ import annotations

from .entry import knobbed

_DTYPE = "the result does not change with dtype_bytes; multiply by dtype_bytes (2 for fp16, 4 for fp32)."
_GB = "the result is in gigabytes; return the exact number of bytes (an integer)."
_BITS = "the result is in bits, 8 times the byte count; dtype_bytes already counts bytes, so do not multiply by 8."
MEMORY = [   # function, id, knobs, advice
    ("attention_memory_bytes", "dtype-ignored", {"dtype": "fixed"}, _DTYPE),
    ("attention_memory_bytes", "dtype-ignored", {"dtype": "dropped"}, _DTYPE),
    ("attention_memory_bytes", "linear-in-n", {"power": 1},
     "the count grows linearly in n; the score matrix is n x n, so it holds n * n values."),
    ("attention_memory_bytes", "bytes-as-gb", {"unit": "gb"}, _GB),
    ("attention_memory_bytes", "bits-not-bytes", {"unit": "bits"}, _BITS),
    ("ffn_memory_bytes", "expansion-missing", {"widen": False},
     "the FFN hidden layer is `expansion` times wider than d_model; multiply by expansion."),
    ("ffn_memory_bytes", "dtype-ignored", {"dtype": "fixed"}, _DTYPE),
    ("ffn_memory_bytes", "dtype-ignored", {"dtype": "dropped"}, _DTYPE),
    ("ffn_memory_bytes", "bytes-as-gb", {"unit": "gb"}, _GB),
    ("ffn_memory_bytes", "bits-not-bytes", {"unit": "bits"}, _BITS),
    ("crossover_length", "crossover-off-by-one", {"shift": 1},
     "one past the crossover: at n = expansion * d_model the two are already equal, and the "
     "crossover is the smallest n with attention >= FFN (use >=, not >)."),
    ("crossover_length", "crossover-off-by-one", {"shift": -1},
     "one short: at n = expansion * d_model - 1 attention is still smaller than the FFN."),
    ("crossover_length", "crossover-from-zero", {"shift": "zero"},
     "the search starts at n = 0, where both counts are 0 and 0 >= 0 already holds; the crossover is "
     "the smallest n >= 1 with attention >= FFN, so start at n = 1."),
    ("crossover_length", "expansion-missing", {"widen": False},
     "the crossover ignores the FFN expansion; n^2 >= n * expansion * d_model gives "
     "n = expansion * d_model."),
]



def _itemsize(c: float) -> bool:
    """A dtype's size in bytes, written in where dtype_bytes belongs."""
    return c in (1, 2, 4, 8)


def _whole(c: float) -> bool:
    """A positive whole number (64, 4096, d_model ...), written in where the second n belongs."""
    return c >= 1 and abs(c - round(c)) <= 1e-9 * c


# a count linear in n is linear whatever whole number the student multiplied n by, and a count that ignores
# dtype_bytes ignores it whatever itemsize stands in its place: the forms that drop the argument are proven up
# to such a constant, the same on every input (a single entry only: in a compound the constant could hide a
# second mistake, such as a hard-coded expansion)
CONSTANTS = {("linear-in-n", "power"): _whole, ("dtype-ignored", "dropped"): _itemsize,
             ("expansion-missing", "widen"): _whole}


# a count that ignores expansion ignores it whatever whole number is written in its place (expansion = 4 as a
# literal is the family: the argument is not used), but such a constant can stand for another part of a
# compound: n * d_model * dtype_bytes * 8 may be expansion-missing + bits-not-bytes or expansion = 8 written in,
# so the compound is not proven (a single entry may carry the constant: 8 for the expansion)
WRITTEN_IN = {"expansion-missing": _whole}


def _constant(mid: str, knobs: dict):
    if "widen" in knobs:
        return CONSTANTS.get((mid, "widen"))
    return CONSTANTS.get((mid, "power")) if "power" in knobs else CONSTANTS.get((mid, knobs.get("dtype")))


ENTRIES = [knobbed(mid, function, knobs, advice, constant=_constant(mid, knobs), written_in=WRITTEN_IN.get(mid))
           for function, mid, knobs, advice in MEMORY]
