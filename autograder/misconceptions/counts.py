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

from dataclasses import dataclass

import numpy as np

import solutions

from .probes import seeded
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
DIGITS = 4              # significant digits wanted of every answer: a coarser display is read at larger sizes
MIN_DIGITS = 2.5        # fewer than this even at larger sizes: too coarse to read any ratio
LADDER = (1, 32, 1024, 4096)   # how much larger n (and d_model) is made for that: the first that shows DIGITS
ROUNDINGS = (("rounded", np.round), ("rounded up", np.ceil), ("rounded down", np.floor))
WHAT = {"attention_memory_bytes": "the attention matrix's count", "ffn_memory_bytes": "the FFN count",
        "crossover_length": "the crossover"}


def reading(function: str, args: tuple, probe) -> _Reading | None:
    """The student's counts at a few ordinary base points and with each argument doubled and tripled, read at
    larger sizes where the answers are rounded for display; None when a call failed, an answer is not one
    number, or the answers stay too coarse to read (fewer than ``MIN_DIGITS`` significant digits)."""
    if probe is None:
        return None
    memo = getattr(probe, "readings", None)           # one reading per probe: the family and the localiser share it
    if memo is None:
        return _reading(function, args, probe)
    key = (function, repr(args))
    if key not in memo:
        memo[key] = _reading(function, args, probe)
    return memo[key]


def _reading(function: str, args: tuple, probe) -> _Reading | None:
    names = ARGUMENTS[function]
    bases = _bases(function, args)
    read = _read(function, probe, bases, names)
    if read is not None and function != "crossover_length" and read.digits < DIGITS:
        needed = np.sqrt(10.0 ** (DIGITS - max(read.digits, 0.0)))      # the count grows as the square of times
        for times in (t for t in LADDER[1:] if t >= needed or t == LADDER[-1]):
            read = _read(function, probe, _finer(function, bases, times), names)
            if read is None or read.digits >= DIGITS:
                break
    return None if read is None or read.digits < MIN_DIGITS else read


def reading_inputs(function: str, args: tuple) -> list[list[tuple]]:
    """Every input ``reading`` may ask, in the groups it asks them: the base points and each argument doubled and
    tripled, at each size of the ladder (only the first is asked of the crossover)."""
    names = ARGUMENTS[function]
    bases = _bases(function, args)
    ladder = LADDER[:1] if function == "crossover_length" else LADDER
    return [_asked(_finer(function, bases, times), names) for times in ladder]


def localise_count(function: str, args: tuple, value, probe) -> Localisation | None:
    read = reading(function, args, probe)
    if read is None:
        return None                                   # a failed call, not one number, or too coarse to read
    names = ARGUMENTS[function]
    for k, name in enumerate(names):
        ratio = _consistent(read.ratios(k), read.tolerance)
        want = read.right_grown[0, k, 0] / read.right_base[0]
        if ratio is not None and not _near(ratio, want, read.tolerance):
            return Localisation(name, f"Doubling {name} multiplies your {_noun(function)} by {ratio:.4g}, but "
                                f"it should multiply it by {want:.4g}: check how {name} enters the count.")
        if ratio is None:
            affine = _affine(function, read, k, name)
            if affine is not None:
                return affine
    return _constant_factor(function, list(read.base), list(read.right_base)) or _rounded_unit(function, read)


@dataclass
class _Reading:
    """The student's counts and the right ones at each base point, and with each argument doubled and tripled;
    ``digits``: the fewest significant digits any of the student's answers shows (display rounding)."""
    base: np.ndarray                 # (BASES,)
    grown: np.ndarray                # (BASES, arguments, 2): doubled, tripled
    right_base: np.ndarray
    right_grown: np.ndarray
    ulp: np.ndarray                  # a unit in the last place of each answer, base and grown alike
    digits: float

    @property
    def tolerance(self) -> float:
        """The relative tolerance of a ratio of two answers: the rounding of each, and floor division."""
        return TOLERANCE + 2 * 10.0 ** -self.digits

    def ratios(self, k: int) -> list[float]:
        return [g / b if b else np.nan for g, b in zip(self.grown[:, k, 0], self.base)]

    def every(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(the student's answers, the right counts, a unit in the last place of each), every input read."""
        return (np.concatenate([self.base, self.grown.ravel()]),
                np.concatenate([self.right_base, self.right_grown.ravel()]), self.ulp)


def _asked(bases: list[tuple], names) -> list[tuple]:
    return bases + [_grown(base, k, m) for base in bases for k in range(len(names)) for m in (2, 3)]


def _read(function, probe, bases, names) -> _Reading | None:
    asked = _asked(bases, names)
    answers = probe(asked)
    if any(isinstance(a, Exception) or np.shape(a) != () for a in answers):
        return None
    got = np.array([float(a) for a in answers])
    right = np.array([float(getattr(solutions, function)(*a)) for a in asked])
    if not np.all(np.isfinite(got)):
        return None
    ulp = np.array([last_place(g) for g in got])
    with np.errstate(divide="ignore", invalid="ignore"):
        shown = np.where(ulp > 0, np.abs(got) / np.where(ulp > 0, ulp, 1), np.inf)
    digits = float(np.log10(shown.min())) if np.all(got != 0) else 0.0
    shape = (len(bases), len(names), 2)
    return _Reading(got[:len(bases)], got[len(bases):].reshape(shape), right[:len(bases)],
                    right[len(bases):].reshape(shape), ulp, digits)


def last_place(v: float) -> float:
    """A unit in the last decimal place the answer shows (0.01 for 0.54, 1 for 536870912 and for 17000: a whole
    number is read to the unit, and a coarse one is read at larger sizes); 0 when it shows more than 12
    decimals (computed, not rounded for display)."""
    for k in range(13):
        scaled = v * 10.0 ** k
        if abs(scaled - round(scaled)) <= 1e-9 * max(1.0, abs(scaled)):
            return 10.0 ** -k
    return 0.0


def _finer(function: str, bases: list[tuple], times: int) -> list[tuple]:
    """The bases with n (and the FFN's d_model) ``times`` larger, so an answer rounded for display shows more digits."""
    if times == 1 or function == "crossover_length":
        return bases
    if function == "attention_memory_bytes":
        return [(n * times, *rest) for n, *rest in bases]
    return [(n * times, d * times, *rest) for n, d, *rest in bases]


def _affine(function: str, read: _Reading, k: int, name: str) -> Localisation | None:
    """The count is affine in argument ``k`` (equal steps as it doubles and triples) with a part that does not
    grow with it, where the right count is proportional to it: an additive term, such as (1 + expansion)."""
    g1, g2, g3 = read.base, read.grown[:, k, 0], read.grown[:, k, 1]
    r1, r2, r3 = read.right_base, read.right_grown[:, k, 0], read.right_grown[:, k, 1]
    slack = read.tolerance * np.maximum(np.abs(g3), 1.0)
    steps = g2 - g1
    right_steps = r2 - r1
    if not (np.allclose(r3 - r2, right_steps) and np.allclose(r1, right_steps)):
        return None                                   # the right count is not proportional to this argument
    if not np.all(np.abs((g3 - g2) - steps) <= slack) or np.any(steps == 0):
        return None
    rest = g1 - steps                                 # the part that does not grow with the argument
    if not np.all(np.abs(rest) > slack):
        return None
    share = rest / g1
    return Localisation(name, f"Your {_noun(function)} grows by equal steps as {name} doubles and triples, but part of "
                        f"it ({share[0]:.0%} at the first input tried) does not grow with {name} at all; the count "
                        f"is proportional to {name}: check how {name} enters the count (an added term, such as "
                        f"1 + {name}?).")


def _rounded_unit(function: str, read: _Reading) -> Localisation | None:
    """Every answer is the exact count in a unit, rounded (round, floor or ceil) to the places it shows."""
    if function == "crossover_length" or not np.all(read.ulp > 0):
        return None
    got, right, _ = read.every()
    for ratio, shown, unit in UNITS:
        how = rounded(got, right * ratio, read.ulp)
        if how:
            return Localisation("unit", f"Your {_noun(function)} is the right number of bytes "
                                f"{'times' if ratio > 1 else 'divided by'} {shown} and {how} on every "
                                f"input tried, a count in {unit} as shown for reading: return the number of "
                                "bytes itself (an integer), with no unit or rounding.")
    return None


def rounded(got, want, ulp) -> str | None:
    """How ``got`` is ``want`` rounded the same way (round, ceil, floor) on every input to the places each
    answer shows ("rounded up to a whole number"), else None."""
    if not np.all(ulp > 0):
        return None
    for how, rounding in ROUNDINGS:
        if all(exactly(g, rounding(w / u) * u) for g, w, u in zip(got, want, ulp)):
            return f"{how} {_places(ulp)}"
    return None


def _places(ulp) -> str:
    finest = float(np.min(ulp))
    if finest >= 1:
        return "to a whole number" if finest == 1 else f"to a multiple of {finest:g}"
    return f"to {int(round(-np.log10(finest)))} decimals"


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
                if all(exactly(g, w) for g, w in zip(got, scaled)):
                    return Localisation("unit", f"Your {noun} follows every argument as it should but is the "
                                        f"right number of bytes {how} {shown} on every input tried, a count in "
                                        f"{unit}: return the number of bytes itself.")
    if not all(exactly(g, factor * r) for g, r in zip(got, right)):
        return None
    fix = "check how the crossover is found" if function == "crossover_length" else "check each factor of the count"
    return Localisation("unit", f"Your {noun} follows every argument as it should but is {factor:.4g} times the "
                        f"right value on every input tried: {fix}.")


def exactly(a: float, b: float) -> bool:
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


def _grown(base: tuple, k: int, times: int) -> tuple:
    return tuple(v * times if i == k else v for i, v in enumerate(base))


def _consistent(values, tolerance: float = TOLERANCE) -> float | None:
    """The common value, when every value is finite and they agree; else None."""
    arr = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(arr)) or not np.allclose(arr, arr[0], rtol=tolerance, atol=0):
        return None
    return float(arr[0])


def _near(a: float, b: float, tolerance: float = TOLERANCE) -> bool:
    return abs(a - b) <= tolerance * abs(b)
