"""Which stage of attention deviates, read from the student's own outputs alone.

Used when no catalogue entry (single or compound) reproduces a wrong answer. The
stages are checked in the order their evidence is clearest: the softmax's
normalisation (and its axis), the mask, the scale of the scores, and finally the
output against the student's own weights. The first that deviates is named in
one sentence; ``None`` when the outputs show no deviation these tests can name.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..tolerance import ATOL, RTOL

FUNCTIONS = ("scaled_dot_product_attention", "causal_attention", "cross_attention")
STAGES = ("softmax-axis", "softmax", "mask", "scale", "scores", "output")


@dataclass(frozen=True)
class Localisation:
    stage: str          # one of STAGES
    sentence: str       # one sentence for the student


def localise(function: str, args: tuple, value) -> Localisation | None:
    """The first deviating stage of the student's (output, weights) on inputs (Q, K, V)."""
    if function not in FUNCTIONS or not isinstance(value, tuple) or len(value) != 2:
        return None
    Q, K, V = args
    out, w = (np.asarray(v, dtype=float) for v in value)
    if w.shape != (len(Q), len(K)):
        return None                                   # the check's message already names the shapes
    allowed = np.tril(np.ones(w.shape, dtype=bool)) if function == "causal_attention" else np.ones(w.shape, bool)
    for stage in (_normalisation(w), _mask(w, allowed), _scale(Q, K, w, allowed), _output(out, w, V)):
        if stage is not None:
            return stage
    return None


def _normalisation(w) -> Localisation | None:
    nan_rows = np.flatnonzero(np.isnan(w).any(axis=1))
    if nan_rows.size:
        return Localisation("softmax", f"Row {nan_rows[0]} of your weights is NaN: its scores are all -inf "
                            "(or exp() overflowed), so the softmax had nothing to normalise.")
    if (w < -ATOL).any():
        i, j = np.argwhere(w < -ATOL)[0]
        return Localisation("softmax", f"Your weights have negative entries (row {i}, key {j} is "
                            f"{w[i, j]:.3g}); a softmax gives values between 0 and 1.")
    rows, cols = w.sum(axis=1), w.sum(axis=0)
    if np.allclose(rows, 1, rtol=RTOL, atol=1e-4):
        return None
    if w.shape[0] > 1 and np.allclose(cols, 1, rtol=RTOL, atol=1e-4):
        return Localisation("softmax-axis", "Each column of your weights sums to 1 instead of each row: the "
                            "softmax normalises over the queries; take it over the keys (axis=-1).")
    i = int(np.argmax(np.abs(rows - 1)))
    return Localisation("softmax", f"Row {i} of your weights sums to {rows[i]:.3g}, not 1: the softmax's "
                        "normalisation is off (divide each row's exponentials by that row's sum).")


def _mask(w, allowed) -> Localisation | None:
    seen = np.argwhere(~allowed & (np.abs(w) > ATOL))
    if seen.size:
        i, j = seen[0]
        return Localisation("mask", f"Row {i} puts weight {w[i, j]:.3g} on position {j}, in its future: the mask "
                            "does not hide j > i (add -inf above the diagonal to the scores before the softmax).")
    hidden = np.argwhere(allowed & (w == 0))
    if hidden.size:
        i, j = hidden[0]
        return Localisation("mask", f"Row {i} puts exactly zero weight on key {j}, which it should see: something "
                            "masks keys that this attention must not hide.")
    return None


def _scale(Q, K, w, allowed) -> Localisation | None:
    """Fit log w = c * Q K^T + (a constant per row) over the visible keys."""
    raw = Q @ K.T
    logs, xs = [], []
    for i in range(len(w)):
        keep = allowed[i]
        if keep.sum() < 2:
            continue
        lw, r = np.log(w[i, keep]), raw[i, keep]
        logs.append(lw - lw.mean())
        xs.append(r - r.mean())
    if not xs:
        return None
    y, x = np.concatenate(logs), np.concatenate(xs)
    c = float(x @ y / (x @ x))
    expected = 1 / np.sqrt(Q.shape[-1])
    if np.max(np.abs(y - c * x)) > 1e-3 * max(1.0, np.max(np.abs(y))):
        return Localisation("scores", "Your weights are not a softmax of Q K^T times any constant: check how "
                            "the scores are computed (Q @ K.T, one row per query and one column per key).")
    if abs(c - expected) > 1e-3 * expected:
        return Localisation("scale", f"Your weights are a softmax of Q K^T times {c:.4g}, not times "
                            f"1/sqrt(d_k) = {expected:.4g}: check how the scores are scaled.")
    return None


def _output(out, w, V) -> Localisation | None:
    want = (w.shape[0], V.shape[1])
    if out.shape != want:
        return Localisation("output", f"Your output has shape {out.shape}, but your own weights @ V would have "
                            f"shape (n_q, d_v) = {want}: return weights @ V as the output.")
    if not np.allclose(out, w @ V, rtol=RTOL, atol=ATOL):
        i = int(np.argmax(np.abs(out - w @ V).max(axis=1)))
        return Localisation("output", f"Your weights look right, but your output is not your own weights @ V "
                            f"(row {i} differs): check the last step, output = weights @ V.")
    return None
