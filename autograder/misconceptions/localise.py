"""Which stage of attention deviates, read from the student's own outputs alone.

Used when no catalogue entry (single or compound) is proven. The stages are checked in the order
their evidence is clearest: the softmax's normalisation (and its axis), the mask, the scale of the
scores, and finally the output against the student's own weights. The first that deviates is named
in one sentence; ``None`` when the outputs show no deviation these tests can name.

Weights that come back transposed, or output and weights swapped, are read the right way round to
find the stage, but every sentence speaks of what the student returned: its rows and columns, its
indices. Memory counts are localised by ``counts.py``, the causal mask by ``maskshape.py``, the
softmax by ``softmaxaxis.py``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..tolerance import ATOL, HALF_TOL, RTOL, HalfPrecision
from .competing import explain
from .counts import localise_count
from .maskshape import localise_mask
from .probes import COUNTS
from .softmaxaxis import localise_softmax
from .stages import STAGES, Localisation  # noqa: F401 - STAGES is part of this module's vocabulary

FUNCTIONS = ("scaled_dot_product_attention", "causal_attention", "cross_attention")


@dataclass(frozen=True)
class View:
    """How the student's weights are laid out, so a sentence names their own rows and indices."""
    transposed: bool = False     # one column per query
    swapped: bool = False        # (weights, output) instead of (output, weights)
    shape: tuple = ()

    def line(self, i: int) -> str:
        return f"column {i}" if self.transposed else f"row {i}"

    def at(self, i: int, j: int) -> str:
        return f"[{j}, {i}]" if self.transposed else f"[{i}, {j}]"

    @property
    def lines(self) -> str:
        return "column" if self.transposed else "row"

    def told(self, sentence: str) -> str:
        """The sentence, preceded by what is odd about the layout."""
        notes = []
        if self.swapped:
            notes.append("your output and weights come back swapped (weights first)")
        if self.transposed:
            notes.append(f"your weights come back transposed, shape {self.shape}, one column per query")
        if not notes:
            return sentence
        said = " and ".join(notes)
        return f"{said[0].upper()}{said[1:]}; besides that, {sentence[0].lower()}{sentence[1:]}"


def localise(function: str, args: tuple, value, probe=None) -> Localisation | None:
    """The first deviating stage of the student's (output, weights) on inputs (Q, K, V), or of a count, a
    mask or a softmax."""
    if function in COUNTS:
        return localise_count(function, args, value, probe)
    if function == "causal_mask":
        return localise_mask(probe)
    if function == "softmax":
        return localise_softmax(args, value, probe)
    if function not in FUNCTIONS or not isinstance(value, tuple) or len(value) != 2:
        return None
    Q, K, V = args
    half = any(isinstance(v, HalfPrecision) for v in value)          # returned in float16: read to its precision
    laid = _laid_out(*(np.asarray(v, dtype=float) for v in value), len(Q), np.asarray(V, dtype=float))
    if laid is None:
        return None                                   # the check's message already names the shapes
    out, w, view = laid
    allowed = np.tril(np.ones(w.shape, dtype=bool)) if function == "causal_attention" else np.ones(w.shape, bool)
    with np.errstate(all="ignore"):                   # log(0) and inf - inf are read as what they are
        settled = explain(function, args, out, w, view, probe, half)
        if settled is not None:
            return Localisation(settled.stage, view.told(settled.sentence))
        largest = np.abs(Q @ K.T).max() / np.sqrt(Q.shape[-1])          # exp() overflows beyond about 709
        tol = HALF_TOL if half else 1.0
        stages = (_normalisation(w, view, largest, tol), _mask(w, allowed, view), _scale(Q, K, w, allowed, tol),
                  _output(out, w, V, tol))
    for stage in stages:
        if stage is not None:
            return Localisation(stage.stage, view.told(stage.sentence))
    if view.swapped or view.transposed:
        return Localisation("layout", view.told("the values are right: return (output, weights), the weights "
                                                "with shape (n_q, n_k), one row per query."))
    return None


def _transposed_square(out, w, V) -> bool:
    """Square weights whose transpose gives the output (output == weights^T @ V, not weights @ V): returned
    transposed (a softmax over the queries would give output == weights @ V)."""
    if w.shape[0] != w.shape[1] or out.shape != (len(w), V.shape[1]) or not np.all(np.isfinite(w)):
        return False
    return np.allclose(out, w.T @ V, rtol=RTOL, atol=ATOL) and not np.allclose(out, w @ V, rtol=RTOL, atol=ATOL)


def _laid_out(out, w, n_q, V):
    """(output, weights) the right way round, and how the student laid them out; None if unrecognisable."""
    n_k, d_v = V.shape
    for first, second, swapped in ((out, w, False), (w, out, True)):
        if second.shape == (n_q, n_k) and _transposed_square(first, second, V):
            return first, second.T, View(True, swapped, second.shape)
        if second.shape == (n_q, n_k):
            return first, second, View(False, swapped, second.shape)
        if n_q != n_k and second.shape == (n_k, n_q) and first.shape == (n_q, d_v):
            return first, second.T, View(True, swapped, second.shape)
    return None


def _normalisation(w, view, largest: float = 0.0, tol: float = 1.0) -> Localisation | None:
    """``largest``: the largest scaled score in size (beyond about 709, exp() overflows in float64); ``tol``: the
    tolerance, a float16 answer's (1.0: float64's own)."""
    nan_rows = np.flatnonzero(np.isnan(w).any(axis=1))
    if nan_rows.size:
        return Localisation("softmax", f"{view.line(nan_rows[0]).capitalize()} of your weights is NaN: its "
                            "scores are all -inf (or exp() overflowed), so the softmax had nothing to normalise.")
    if (w < -ATOL).any():
        i, j = np.argwhere(w < -ATOL)[0]
        return Localisation("softmax", f"Your weights have negative entries ({view.at(i, j)} is "
                            f"{w[i, j]:.3g}); a softmax gives values between 0 and 1.")
    rows, cols = w.sum(axis=1), w.sum(axis=0)
    atol = 1e-4 if tol == 1.0 else tol
    if np.allclose(rows, 1, rtol=RTOL, atol=atol):
        return None
    if w.shape[0] > 1 and np.allclose(cols, 1, rtol=RTOL, atol=atol):
        other = "row" if view.transposed else "column"
        return Localisation("softmax-axis", f"Each {other} of your weights sums to 1 instead of each {view.lines}: "
                            "the softmax normalises over the queries; take it over the keys (axis=-1).")
    i = int(np.argmax(np.abs(rows - 1)))
    if largest > 709.0:
        return Localisation("softmax", f"{view.line(i).capitalize()} of your weights sums to {rows[i]:.3g}, not 1, with "
                            f"scores up to {largest:.3g} in size: exp() of scores this large overflows (or underflows "
                            "to 0), so the exponentials cannot be divided by their sum; subtract each row's maximum "
                            "before exponentiating.")
    return Localisation("softmax", f"{view.line(i).capitalize()} of your weights sums to {rows[i]:.3g}, not 1: "
                        f"the softmax's normalisation is off (divide each query's exponentials by their sum).")


def _mask(w, allowed, view) -> Localisation | None:
    seen = np.argwhere(~allowed & (np.abs(w) > ATOL))
    if seen.size:
        i, j = seen[0]
        return Localisation("mask", f"{view.line(i).capitalize()} puts weight {w[i, j]:.3g} on position {j}, in "
                            "its future: the mask does not hide j > i (add -inf above the diagonal to the scores "
                            "before the softmax).")
    hidden = np.argwhere(allowed & (w == 0))
    if hidden.size:
        i, j = hidden[0]
        return Localisation("mask", f"{view.line(i).capitalize()} puts exactly zero weight on key {j}, which it "
                            "should see: something masks keys that this attention must not hide.")
    return None


def _scale(Q, K, w, allowed, tol: float = 1.0) -> Localisation | None:
    """Fit log w = c * Q K^T + (a constant per row) over the visible keys (to ``tol``, a float16 answer's)."""
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
    slack = 1e-3 if tol == 1.0 else 10 * tol
    if np.max(np.abs(y - c * x)) > slack * max(1.0, np.max(np.abs(y))):
        return Localisation("scores", "Your weights are not a softmax of Q K^T times any constant: check how "
                            "the scores are computed (Q @ K.T, one row per query and one column per key).")
    if abs(c - expected) > slack * expected:
        return Localisation("scale", f"Your weights are a softmax of Q K^T times {c:.4g}, not times "
                            f"1/sqrt(d_k) = {expected:.4g}: check how the scores are scaled.")
    return None


def _output(out, w, V, tol: float = 1.0) -> Localisation | None:
    want = (w.shape[0], V.shape[1])
    if out.shape != want:
        return Localisation("output", f"Your output has shape {out.shape}, but your own weights @ V would have "
                            f"shape (n_q, d_v) = {want}: return weights @ V as the output.")
    if not np.allclose(out, w @ V, rtol=RTOL if tol == 1.0 else tol, atol=ATOL if tol == 1.0 else tol):
        i = int(np.argmax(np.abs(out - w @ V).max(axis=1)))
        return Localisation("output", f"Your weights look right, but your output is not your own weights @ V "
                            f"(row {i} differs): check the last step, output = weights @ V.")
    return None
