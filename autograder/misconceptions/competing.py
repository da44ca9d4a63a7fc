"""Explanations the student's own outputs settle cheaply, tried before a stage of attention is named.

The stages (``localise.py``) read the first symptom; several mistakes show the same one. Each test here
settles one competing explanation from what the student returned (and, for two of them, a few more calls
on inputs built like the check's), and says only what it proved:

- NaN (first): where it appears, and whether it goes away with the same inputs a hundred times smaller
  (exp() overflowed) or stays (then not an overflow; where it comes from is not claimed);
- the visible set of each row (causal attention): every row puts no weight on its own position, so the
  first row has no key left to see, whatever became of it;
- softmax applied twice: each row is a softmax of the right weights;
- the previous call's weights: after other inputs of the same shapes, the weights returned are those of
  the earlier call, again after a second earlier call (a buffer reused); weights that stay the same for
  every Q and K of these shapes while the output follows V are said to be that, with no cause (a cache
  keyed on the shapes and weights that ignore Q and K look alike).

Square weights returned transposed with a right output (output == weights^T @ V) are read by
``localise._laid_out``, so they are not told the softmax normalises over the queries.
"""
from __future__ import annotations

import numpy as np

from ..tolerance import ATOL, RTOL, allclose
from .nan import where
from .probes import seeded
from .stages import Localisation
from .pipeline import attend

SMALLER = 100.0            # the NaN test's inputs: Q and K this many times smaller


def explain(function: str, args: tuple, out, w, view, probe, half: bool = False) -> Localisation | None:
    """The first explanation the outputs settle, or None (then the stages are read); ``half``: the answer came
    back in float16."""
    nan = _nan(function, args, out, w, view, probe, half)
    if nan is not None:
        return nan
    if function == "causal_attention":
        empty = _diagonal_hidden(w, view)
        if empty is not None:
            return empty
    return _twice(args, w, function) or _previous_call(args, probe)


OVERFLOW_HALF = 11.0       # exp() of more than this overflows float16, the narrowest float an answer comes in


def _nan(function, args, out, w, view, probe, half: bool = False) -> Localisation | None:
    """Where the answer is NaN, and what Q and K a hundred times smaller show (``half``: it came back float16)."""
    said = [s for s in (where(w, "your weights"), where(out, "your output")) if s]
    if not said:
        return None
    lines = "columns" if view.transposed else "rows"
    observed = " and ".join(s.replace(" rows ", f" {lines} ").replace(" row ", f" {lines[:-1]} ") for s in said)
    if function == "causal_attention" and _diagonal_hidden(w, view) is not None:
        return _diagonal_hidden(w, view)
    smaller = _call(probe, smaller_inputs(args))
    if smaller is None:
        return Localisation("nan", f"{observed[0].upper()}{observed[1:]}: a NaN comes from 0/0, inf - inf or a row "
                            "whose scores are all -inf; find where it first appears (np.isnan).")
    said = f"{observed[0].upper()}{observed[1:]}"
    if not any(np.isnan(np.asarray(a, dtype=float)).any() for a in smaller):
        if half:
            return Localisation("nan", f"{said}, and nowhere with Q and K {SMALLER:.0f} times smaller; your answer is "
                                "float16, which holds numbers only up to 65504: on large scores the scores or their "
                                "exponentials overflow it. Compute in float64, each row's maximum subtracted before "
                                "exponentiating.")
        return Localisation("nan", f"{said}, and nowhere with Q and K {SMALLER:.0f} times smaller: on large scores "
                            "exp() overflows (or underflows to 0, and 0/0 is NaN); subtract each row's own maximum "
                            "before exponentiating.")
    Q, K, _ = smaller_inputs(args)
    if np.abs(np.asarray(Q, dtype=float) @ np.asarray(K, dtype=float).T).max() >= OVERFLOW_HALF:
        return Localisation("nan", f"{said}, also with Q and K {SMALLER:.0f} times smaller: find where it first "
                            "appears (np.isnan): 0/0, inf - inf or a row whose scores are all -inf.")
    return Localisation("nan", f"{said}, also with Q and K {SMALLER:.0f} times smaller, where no exp() "
                        "overflows: look for 0/0 or inf - inf (a row whose scores are all -inf gives both).")


def _diagonal_hidden(w, view) -> Localisation | None:
    """Every row after the first puts no weight on itself nor on its future: the diagonal is hidden too."""
    n = len(w)
    if n < 3 or w.shape != (n, n):
        return None
    rest = w[1:]
    if not np.all(np.isfinite(rest)):
        return None
    seen = np.abs(rest) > ATOL
    hidden = np.triu(np.ones((n, n), dtype=bool))[1:]
    if seen[hidden].any() or not seen.any(axis=1).all():
        return None
    first = w[0]
    became = ("NaN" if np.isnan(first).any() else "all zeros" if np.allclose(first, 0, atol=ATOL)
              else "uniform" if np.allclose(first, first[0]) else f"{np.round(first, 3).tolist()}")
    return Localisation("mask", f"No {view.line(0).split()[0]} of your weights after the first puts weight on "
                        f"its own position: the diagonal is hidden along with the future, so the first position "
                        f"has no key left to see (its weights came back {became}). A position may attend to "
                        "itself: hide only j > i.")


def _twice(args, w, function) -> Localisation | None:
    """Each row of the weights is a softmax of the right weights (at some usual scale): applied twice."""
    Q, K, V = args
    mask = "causal" if function == "causal_attention" else None
    if not np.all(np.isfinite(w)):
        return None
    said = {"sqrt_dk": "softmax(Q K^T / sqrt(d_k))", "none": "softmax(Q K^T)", "dk": "softmax(Q K^T / d_k)"}
    for scale, formula in said.items():
        once = attend(Q, K, V, scale=scale, mask=mask)[1]
        if _same(w, _softmax_rows(once, mask)) and not _same(w, once):
            return Localisation("softmax", f"Each row of your weights is a softmax of {formula}: the softmax is "
                                "applied twice; apply it once, to the scaled scores.")
    return None


def _softmax_rows(p, mask):
    hidden = np.triu(np.ones(p.shape, dtype=bool), 1) if mask == "causal" else np.zeros(p.shape, bool)
    s = np.where(hidden, -np.inf, p)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def smaller_inputs(args: tuple) -> tuple:
    """The NaN test's input: Q and K ``SMALLER`` times smaller."""
    Q, K, V = args
    return Q / SMALLER, K / SMALLER, V


def previous_call_inputs(args: tuple) -> list[tuple]:
    """[X, args, Y, args], asked in this order: X and Y of the same shapes, drawn from the check's input."""
    rng = seeded(args)
    first, second = (tuple(rng.normal(0, 1, np.shape(a)) for a in args) for _ in range(2))
    return [first, args, second, args]


def _previous_call(args, probe) -> Localisation | None:
    """[X, args, Y, args]: the weights for ``args`` are the student's own for X, then for Y (X's differ from Y's)."""
    if probe is None:
        return None
    answers = probe(previous_call_inputs(args))
    if any(isinstance(a, Exception) for a in answers):
        return None
    w = [np.asarray(a[1], dtype=float) for a in answers]
    out = [np.asarray(a[0], dtype=float) for a in answers]
    if all(_same(w[0], other) for other in w[1:]) and not _same(out[0], out[2]):
        return Localisation("state", "Your function returned the same weights for three different Q and K of these "
                            "shapes, while its output follows V: the weights do not follow the values of Q and K; "
                            "compute them from each call's own Q and K, softmax(Q K^T / sqrt(d_k)).")
    if _same(w[0], w[2]) or not (_same(w[1], w[0]) and _same(w[3], w[2])):
        return None
    return Localisation("state", "After a call with other inputs of the same shapes, your function returned the "
                        "weights of that earlier call (twice, after two different earlier calls): it keeps them "
                        "between calls (a buffer reused, or a cache keyed on the shapes); compute the weights from "
                        "each call's own Q and K.")


def _same(a, b) -> bool:
    return a.shape == b.shape and allclose(a, b, RTOL, ATOL, equal_nan=True)


def _call(probe, args):
    if probe is None:
        return None
    got = probe([args])[0]
    return None if isinstance(got, Exception) else got
