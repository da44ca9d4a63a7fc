"""Which factor of a memory count deviates, read from how the student's count grows.

Used when no catalogue entry is proven for ``attention_memory_bytes``, ``ffn_memory_bytes`` or
``crossover_length``. Each argument is doubled in turn at a few ordinary base points: the right
count grows by a known ratio (4 when n doubles for an n x n matrix, 2 for each factor of the FFN,
1 for dtype_bytes in the crossover). The first argument the student's count follows with another
ratio, the same at every base point, is named; when every ratio is right but the count is one
constant factor off everywhere (exactly, or a unit with floor division), the unit or the factor is
named. Anything less consistent is left unnamed.
"""
from __future__ import annotations

import numpy as np

import solutions

from .probes import COUNTS, seeded
from .stages import Localisation

ARGUMENTS = {
    "attention_memory_bytes": ("n", "dtype_bytes"),
    "ffn_memory_bytes": ("n", "d_model", "dtype_bytes", "expansion"),
    "crossover_length": ("d_model", "dtype_bytes", "expansion"),
}
BASES = 3
UNITS = ((1e-3, "1000", "kB"), (1 / 1024, "1024", "KiB"), (1e-6, "10**6", "MB"), (2 ** -20, "2**20", "MiB"),
         (1e-9, "10**9", "GB"), (2 ** -30, "2**30", "GiB"), (8, "8", "bits"))
TOLERANCE = 1e-3        # floor division and off-by-ones in a count of thousands stay well inside this
WHAT = {"attention_memory_bytes": "the attention matrix's count", "ffn_memory_bytes": "the FFN count",
        "crossover_length": "the crossover"}


def localise_count(function: str, args: tuple, value, probe) -> Localisation | None:
    if probe is None:
        return None
    bases = _bases(function, args)
    names = ARGUMENTS[function]
    asked = bases + [_doubled(base, k) for base in bases for k in range(len(names))]
    answers = probe(asked)
    if any(isinstance(a, Exception) or np.shape(a) != () for a in answers):
        return None                                   # a failed call or not one number: nothing to read
    got = [float(a) for a in answers]
    right = [float(getattr(solutions, function)(*a)) for a in asked]
    at_base, grown = got[:BASES], np.reshape(got[BASES:], (BASES, len(names)))
    right_base, right_grown = right[:BASES], np.reshape(right[BASES:], (BASES, len(names)))
    for k, name in enumerate(names):
        ratio = _consistent([g / b if b else np.nan for g, b in zip(grown[:, k], at_base)])
        want = right_grown[0, k] / right_base[0]
        if ratio is not None and not _near(ratio, want):
            return Localisation(name, f"Doubling {name} multiplies your {_noun(function)} by {ratio:.4g}, but "
                                f"it should multiply it by {want:.4g}: check how {name} enters the count.")
    return _constant_factor(function, at_base, right_base)


def _constant_factor(function: str, got: list[float], right: list[float]) -> Localisation | None:
    """Every argument followed, but the count is one constant factor off at every base point: a unit
    (exactly, floor division allowed) or another constant (exactly: a count that is only nearly a
    constant factor off, such as n (n + 1) / 2 for n * n, is left unnamed)."""
    if not all(right) or any(g == 0 for g in got):
        return None                   # 0 everywhere: the check's message says what came back
    factor = got[-1] / right[-1]
    if _near(factor, 1.0):
        return None
    noun = _noun(function)
    for ratio, shown, unit in UNITS:
        if function != "crossover_length" and _near(factor, ratio):
            for floor, how in ((False, "divided by" if ratio < 1 else "times"), (True, "floor-divided by")):
                scaled = [np.floor(r * ratio) if floor else r * ratio for r in right]
                if all(_exactly(g, w) for g, w in zip(got, scaled)):
                    return Localisation("unit", f"Your {noun} follows every argument as it should but is the "
                                        f"right number of bytes {how} {shown} on every input tried, a count in "
                                        f"{unit}: return the number of bytes itself.")
    if not all(_exactly(g, factor * r) for g, r in zip(got, right)):
        return None
    fix = "check how the crossover is found" if function == "crossover_length" else "check each factor of the count"
    return Localisation("unit", f"Your {noun} follows every argument as it should but is {factor:.4g} times the "
                        f"right value on every input tried: {fix}.")


def _exactly(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def _noun(function: str) -> str:
    return "crossover length" if function == "crossover_length" else "count"


def _bases(function: str, args: tuple) -> list[tuple]:
    rng = seeded(args)
    out = []
    for _ in range(BASES):
        n, d = int(rng.integers(2000, 6000)), int(rng.integers(1024, 4096))
        b, e = int(rng.choice((1, 2, 4))), int(rng.choice((1, 2, 3, 4)))
        out.append({"attention_memory_bytes": (n, b), "ffn_memory_bytes": (n, d, b, e),
                    "crossover_length": (d, b, e)}[function])
    return out


def _doubled(base: tuple, k: int) -> tuple:
    return tuple(v * 2 if i == k else v for i, v in enumerate(base))


def _consistent(values) -> float | None:
    """The common value, when every value is finite and they agree; else None."""
    arr = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(arr)) or not np.allclose(arr, arr[0], rtol=TOLERANCE, atol=0):
        return None
    return float(arr[0])


def _near(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * abs(b)
