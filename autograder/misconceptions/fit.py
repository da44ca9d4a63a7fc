"""Families as regions of fitted parameters (issue 37, item 1): the student's effective computation, read off
designed probes, whatever its spelling, dtype or failure mode.

The catalogue's entries are settings of the pipeline's knobs (``pipeline.py``): the scale of the scores, the
axis the softmax normalises, whether exp() is taken of scores shifted by their maximum, how the pair is laid
out. Reproducing a variant's numbers (``proof.py``) names a mistake written the way the variant computes it;
one written otherwise (math.exp raising OverflowError where numpy gives inf, float16, the median subtracted
instead of the maximum) reproduces no variant's numbers. So each knob is also fitted on its own, on
``FITTED`` independent probes built from the check's input:

- the layout: which returned array has the shape of the weights, and whether it is transposed;
- the axis: which slices of the weights sum to 1 (rows, columns, the whole matrix);
- the scale: log(weights) less its mean over each normalised slice, against Q K^T less the same mean, is one
  constant c per probe, and c is 1/sqrt(d_k), 1, 1/d_k or 1/sqrt(d_v) of that probe, the same on every probe
  (the probes' d_k and d_v all differ, so the regions do not overlap);
- the output: weights @ V;
- stability: the same probes with scores spread over thousands (Q and K larger; for causal attention each row's
  largest score on its diagonal): the function fails there (an exception, inf or NaN) and nowhere on the
  ordinary probes, or it is right there.

A knob is fitted only when every probe puts it in the same region; ``fitted`` returns None when any knob the
function has is not fitted (then nothing is named this way), and the catalogue entry (or compound) whose knobs
are the fitted ones otherwise (``__init__.diagnose`` tries it after the variants).
"""
from __future__ import annotations

import numpy as np

from ..tolerance import HalfPrecision
from .pipeline import SCALES
from .probes import ATTENTION, agree, seeded
from .tiered import tiers

FITTED = 3                       # independent probes per knob
SPREAD = 9000.0                  # the large probes' raw spread of scores: over 709 at any scale of 1/8 or more
FIT_TOL, FIT_HALF_TOL = 1e-3, 2e-2


def fit_inputs(function: str, args: tuple) -> list[list[tuple]]:
    """The designed probes, in one group: ``FITTED`` ordinary ones, then each with its scores spread over thousands
    within every row, each row's largest the same (``across``), then each with every row's scores offset by its
    own thousands (``offset``)."""
    rng = seeded(args + ("fit",))
    if function == "softmax":
        cases = [(rng.normal(0, 1.5, tuple(int(v) for v in rng.choice(np.arange(3, 7), 3, replace=False))), axis)
                 for axis in (0, 1, 2)]
        return [cases + [(_x_spread(x, axis, across=True), axis) for x, axis in cases]
                + [(_x_spread(x, axis, across=False), axis) for x, axis in cases]]
    if function not in ATTENTION:
        return []
    causal = function == "causal_attention"
    cases = [_attention_case(rng, k, causal) for k in range(FITTED)]
    return [cases + [_spread(case, across=True) for case in cases] + [_spread(case, across=False) for case in cases]]


def _attention_case(rng, k: int, causal: bool):
    """n_q, n_k, d_k and d_v all different, d_k from 2, 4, 7 in turn and d_v never d_k squared (so 1/sqrt(d_k),
    1/d_k, 1/sqrt(d_v) and 1 are all apart)."""
    d_k = (2, 4, 7)[k]
    n_q, n_k, d_v = (int(v) for v in rng.choice([v for v in range(3, 10) if v not in (d_k, d_k * d_k)], 3,
                                                replace=False))
    n_k = n_q if causal else n_k
    return rng.normal(0, 1, (n_q, d_k)), rng.normal(0, 1, (n_k, d_k)), rng.normal(0, 1, (n_k, d_v))


def _spread(case, across: bool):
    """Q and K with one more column, whose product adds SPREAD-sized terms to the scores: across the keys, the
    same in every row and largest on key 0 (which every row sees, causal too), or one offset per row."""
    Q, K, V = case
    big = np.sqrt(SPREAD)
    ramp = lambda n: big * np.linspace(1.0, 0.0, n)[:, None]          # noqa: E731
    q_col = np.full((len(Q), 1), big) if across else ramp(len(Q))
    k_col = ramp(len(K)) if across else np.full((len(K), 1), big)
    return np.hstack([Q, q_col]), np.hstack([K, k_col]), V


def _x_spread(x, axis: int, across: bool):
    """x plus SPREAD-sized terms: along ``axis``, the same in every slice (each slice's largest first), or one
    offset per slice."""
    n = x.shape[axis]
    ramp = np.moveaxis(np.linspace(SPREAD, 0.0, n).reshape((n,) + (1,) * (x.ndim - 1)), 0, axis)
    if across:
        return x + ramp
    other = np.linspace(0.0, SPREAD, x.size // n).reshape(np.delete(x.shape, axis))
    return x + np.expand_dims(other, axis)


# --- reading the answers ------------------------------------------------------------------------------

def _tol(*values) -> float:
    return FIT_HALF_TOL if any(isinstance(v, HalfPrecision) for v in values) else FIT_TOL


def _broken(value) -> bool:
    """An exception, or inf or NaN anywhere (the failure of exp() of scores that were not shifted)."""
    if isinstance(value, Exception):
        return True
    parts = value if isinstance(value, tuple) else (value,)
    try:
        return not all(np.all(np.isfinite(np.asarray(p, dtype=float))) for p in parts)
    except (TypeError, ValueError):
        return True


def _layout(pair, Q, K, V):
    """(output, weights, ret knob) read the right way round, or None."""
    if not isinstance(pair, tuple) or len(pair) != 2:
        return None
    n_q, n_k, d_v = len(Q), len(K), V.shape[1]
    for (out, w), ret in ((pair, "pair"), (pair[::-1], "swapped")):
        if np.shape(out) == (n_q, d_v) and np.shape(w) == (n_q, n_k):
            return out, w, ret
        if np.shape(out) == (n_q, d_v) and np.shape(w) == (n_k, n_q) and n_q != n_k and ret == "pair":
            return out, w.T, "transposed"
    return None


def _axis(w, visible, tol) -> object:
    """-1 (rows sum to 1), 0 (columns), None (the whole matrix), or "?" (none of them)."""
    for axis in (-1, 0):
        sums = np.where(visible, w, 0).sum(axis=axis)
        if np.allclose(sums, 1, rtol=0, atol=tol * 10):
            return axis
    return None if abs(np.where(visible, w, 0).sum() - 1) <= tol * 10 else "?"


def _scale(w, raw, visible, axis, tol) -> float | None:
    """The c with log(w) = c * raw + (a constant per normalised slice) over the visible entries, or None."""
    if not np.all(w[visible] > 0):
        return None
    ys, xs = [], []
    for g in _slices(visible, axis):
        if g.sum() >= 2:
            lw, r = np.log(w[g]), raw[g]
            ys.append(lw - lw.mean())
            xs.append(r - r.mean())
    if not xs:
        return None
    y, x = np.concatenate(ys), np.concatenate(xs)
    if x @ x == 0:
        return None
    c = float(x @ y / (x @ x))
    return c if np.max(np.abs(y - c * x)) <= 10 * tol * max(1.0, np.max(np.abs(y))) else None


def _slices(visible, axis):
    """Boolean masks of the entries each normalisation covers: every row (-1), every column (0), the whole (None)."""
    if axis is None:
        return [visible]
    lines = visible if axis == -1 else visible.T
    out = []
    for i in range(len(lines)):
        g = np.zeros_like(lines)
        g[i] = lines[i]
        out.append(g if axis == -1 else g.T)
    return out


def attention_knobs(function: str, probes: list[tuple], answers: list) -> dict | None:
    """The fitted knobs of an attention function (scale, axis, stable, ret), or None when one is not fitted."""
    ordinary = answers[:FITTED]
    if any(_broken(a) for a in ordinary):
        return None
    found = [_one(function, args, a) for args, a in zip(probes[:FITTED], ordinary)]
    if any(f is None for f in found) or any(f != found[0] for f in found):
        return None
    stable = _stability(answers[FITTED:2 * FITTED], answers[2 * FITTED:])
    return None if stable is None else {**found[0], "stable": stable}


def _one(function, args, pair) -> dict | None:
    Q, K, V = args
    laid = _layout(pair, Q, K, V)
    if laid is None:
        return None
    out, w, ret = laid
    tol = _tol(out, w)
    w = np.asarray(w, dtype=float)
    visible = np.tril(np.ones(w.shape, bool)) if function == "causal_attention" else np.ones(w.shape, bool)
    if np.any(np.abs(w[~visible]) > tol) or not np.allclose(np.asarray(out, float), w @ V, rtol=tol, atol=tol):
        return None                                  # the mask or the output deviate: not these knobs' to say
    axis = _axis(w, visible, tol)
    c = None if axis == "?" else _scale(w, Q @ K.T, visible, axis, tol)
    scale = None if c is None else _scale_knob(c, Q, V, tol)
    return None if scale is None else {"scale": scale, "axis": axis, "ret": ret}


def _scale_knob(c: float, Q, V, tol) -> str | None:
    """The one scale within ``2 * tol`` of c (float16's answers fit c to about 1e-3; the probes' scales lie 6 % or
    more apart, so a wider window makes 1/d_k and 1/sqrt(d_v) ambiguous on some probes)."""
    near = [name for name, f in SCALES.items() if abs(c - f(Q, V)) <= 2 * tol * abs(f(Q, V))]
    return near[0] if len(near) == 1 else None


def _stability(across: list, offset: list) -> bool | None:
    """False when the scores spread over thousands within each row break every probe (an exception, inf or NaN:
    exp() of scores not shifted by the row's largest overflows), True when neither spread breaks any; None
    otherwise (rows offset from one another alone break it: a shift by some other maximum, not this family)."""
    spread, offsets = [_broken(a) for a in across], [_broken(a) for a in offset]
    if all(spread):
        return False
    return True if not any(spread) and not any(offsets) else None


def softmax_knobs(probes: list[tuple], answers: list) -> dict | None:
    """The fitted knobs of softmax(x, axis): over (which axis it normalises: the one given, always the last,
    always 0 or 1, or the whole array) and stable; None when one is not fitted."""
    ordinary = answers[:FITTED]
    if any(_broken(a) for a in ordinary):
        return None
    over = [_over(x, axis, np.asarray(a, dtype=float), _tol(a)) for (x, axis), a in zip(probes, ordinary)]
    knob = _over_knob(over, [axis for _, axis in probes[:FITTED]])
    stable = _stability(answers[FITTED:2 * FITTED], answers[2 * FITTED:])
    return None if knob is None or stable is None else {"over": knob, "stable": stable}


def _over(x, axis, out, tol):
    """The axis whose slices of ``out`` sum to 1 and are a softmax of x along it (None: the whole array)."""
    if out.shape != x.shape or np.any(out <= 0):
        return "?"
    for a in range(x.ndim):
        if np.allclose(out.sum(axis=a), 1, atol=tol * 10, rtol=0) and _is_softmax(x, out, a, tol):
            return a
    return None if abs(out.sum() - 1) <= tol * 10 and _is_softmax(x, out, None, tol) else "?"


def _is_softmax(x, out, axis, tol) -> bool:
    logs = np.log(out)
    y = logs - (logs.mean() if axis is None else logs.mean(axis=axis, keepdims=True))
    t = x - (x.mean() if axis is None else x.mean(axis=axis, keepdims=True))
    return bool(np.max(np.abs(y - t)) <= 10 * tol * max(1.0, np.max(np.abs(y))))


def _over_knob(found: list, asked: list) -> object:
    if "?" in found:
        return None
    if found == asked:
        return "given"
    if all(f == x_last for f, x_last in zip(found, (2, 2, 2))):
        return "last"
    if len(set(map(str, found))) == 1:
        return found[0]
    return None


# --- naming: the catalogue entry whose knobs are the fitted ones -------------------------------------------

DEFAULTS = {"scale": "sqrt_dk", "axis": -1, "stable": True, "ret": "pair", "over": "given"}


def fitted(function: str, args: tuple, probe, value=None) -> object | None:
    """The catalogue entry (or compound) whose knobs are the ones fitted on the designed probes, when every knob
    is fitted and the entry's variant gives the student's values on the ordinary probes and on the check's own
    input (``value``: there it breaks, an exception, inf or NaN, where the variant breaks); else None."""
    groups = fit_inputs(function, args)
    if not groups or probe is None:
        return None
    inputs = groups[0]
    answers = probe(inputs)
    knobs = softmax_knobs(inputs, answers) if function == "softmax" else attention_knobs(function, inputs, answers)
    wrong = {k: v for k, v in (knobs or {}).items() if v != DEFAULTS[k]}
    if not wrong:
        return None
    entry = _entry(function, wrong)
    if entry is None or not _reproduces(entry, inputs[:FITTED], answers[:FITTED]) or not _own(entry, args, value):
        return None
    return entry


def _own(entry, args: tuple, value) -> bool:
    """The entry explains the check's own answer: the variant breaks where the student's did, or agrees with it."""
    try:
        with np.errstate(all="ignore"):
            want = entry.impl(*args)
    except Exception:  # noqa: BLE001 - the variant itself breaks there
        want = RuntimeError()
    if _broken(value) or _broken(want):
        return _broken(value) and _broken(want)
    return _reproduces(entry, [args], [value])


def _entry(function: str, wrong: dict):
    for tier in tiers(function):
        for entry in tier:
            knobs = {k: v for k, v in entry.knobs.items() if k != "peak"}
            if set(knobs) == set(wrong) and all(_matches(k, knobs[k], wrong[k]) for k in wrong):
                return entry
    return None


def _matches(knob: str, entry_value, fitted_value) -> bool:
    if knob == "stable":                   # every realisation of exp() of unshifted scores is one region
        return entry_value is not True and fitted_value is False
    return entry_value == fitted_value


def _reproduces(entry, inputs: list, answers: list) -> bool:
    for args, got in zip(inputs, answers):
        try:
            with np.errstate(all="ignore"):
                want = entry.impl(*args)
        except Exception:  # noqa: BLE001 - a variant that cannot run on these inputs proves nothing
            return False
        if not agree(got, want, _tol(*(got if isinstance(got, tuple) else (got,))) * 10):
            return False
    return True


def contradicts(entry, function: str, args: tuple, probe) -> bool:
    """Whether the designed probes contradict a knob the entry sets: a softmax said to ignore ``axis`` (or to
    normalise along a fixed one) that honours every axis it is given (its wrong default is another mistake)."""
    over = entry.knobs.get("over") if function == "softmax" else None
    if over is None or over == "given" or probe is None:
        return False
    inputs = fit_inputs(function, args)[0]
    answers = probe(inputs[:FITTED])
    if any(_broken(a) for a in answers):
        return False
    found = [_over(x, axis, np.asarray(a, dtype=float), _tol(a)) for (x, axis), a in zip(inputs, answers)]
    return _over_knob(found, [axis for _, axis in inputs[:FITTED]]) == "given"
