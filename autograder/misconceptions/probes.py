"""The evidence a diagnosis rests on: fresh, ordinary inputs and a comparison relative to the values.

A check fails on one input, which may be degenerate (n = 1, a 0 that any count rounds to). Before a
misconception is named, the student's function is called again on a few probe inputs built like the
check's (the same call form, every size >= 2 and different from the others, values of ordinary
magnitude, plus large ones where a stability mistake is at stake). The probes are drawn from a
generator seeded by the check's own input, so a regrade asks the same questions.
"""
from __future__ import annotations

import hashlib
import warnings

import numpy as np

from ..tolerance import ATOL, RTOL

ORDINARY = 4          # probes of ordinary magnitude per diagnosis
LARGE = 3             # probes with large scores (where a stability entry is at stake)
LARGE_FACTOR = {"softmax": 1e4, "attention": 300.0}   # as the stability checks scale their inputs
ATTENTION = ("scaled_dot_product_attention", "causal_attention", "cross_attention")
DTYPE_BYTES = (1, 2, 4, 8)
EXPANSIONS = (1, 2, 3, 4, 6, 8)
COUNTS = ("attention_memory_bytes", "ffn_memory_bytes", "crossover_length")
COUNT_RTOL = 1e-9


def seeded(args: tuple) -> np.random.Generator:
    """A generator that depends only on the check's input (so on the student's seed)."""
    digest = hashlib.sha256()
    for a in args:
        arr = np.asarray(a)
        digest.update(repr((arr.shape, str(arr.dtype))).encode() + np.ascontiguousarray(arr).tobytes())
    return np.random.default_rng(int.from_bytes(digest.digest()[:8], "little"))


def probe_inputs(function: str, args: tuple) -> list[tuple]:
    """Inputs built like ``args`` (same call form), each non-degenerate; large ones where they matter."""
    rng = seeded(args)
    if function == "softmax":
        return _softmax_probes(rng, args)
    if function in ATTENTION:
        return _attention_probes(rng, args, function == "causal_attention")
    if function == "causal_mask":
        return [(int(n),) for n in rng.choice(np.arange(3, 13), size=ORDINARY, replace=False)]
    return _count_probes(rng, function)


def _sizes(rng, count, low, high) -> list[int]:
    return [int(v) for v in rng.choice(np.arange(low, high), size=count, replace=False)]


def _softmax_probes(rng, args):
    ndim = max(np.ndim(args[0]), 1)
    out = []
    for i in range(ORDINARY + LARGE):
        x = rng.normal(0, 1, _sizes(rng, ndim, 2, 7))
        out.append((x * 2.0 if i < ORDINARY else x * LARGE_FACTOR["softmax"], *args[1:]))
    return out


def _attention_probes(rng, args, causal: bool):
    """Ordinary probes, then large ones. Causal attention's large probes are built as its check's large case is:
    keys equal to the queries, each of one length, so every row's largest score is on the diagonal, which it
    sees (a softmax taken before the mask and renormalised still holds there)."""
    Q, K, _ = (np.asarray(a) for a in args)
    square = causal or len(Q) == len(K)
    out = []
    for i in range(ORDINARY + LARGE):
        n_q, n_k, d_k, d_v = _sizes(rng, 4, 3 if square else 2, 10)
        n_k = n_q if square else n_k
        factor = 1.0 if i < ORDINARY else LARGE_FACTOR["attention"]
        q, k, v = rng.normal(0, 1, (n_q, d_k)) * factor, rng.normal(0, 1, (n_k, d_k)) * factor, rng.normal(0, 1, (n_k, d_v))
        out.append((diagonal_large(q), diagonal_large(q), v) if causal and i >= ORDINARY else (q, k, v))
    return out


def diagonal_large(Q, score: float = 1e4) -> np.ndarray:
    """Q's rows scaled to one length, so that Q Q^T / sqrt(d_k) is ``score`` on the diagonal and less elsewhere."""
    Q = np.asarray(Q, dtype=float)
    norms = np.linalg.norm(Q, axis=1, keepdims=True)
    return Q / np.where(norms > 0, norms, 1.0) * np.sqrt(score * np.sqrt(Q.shape[1]))


def _count_probes(rng, function):
    n = _sizes(rng, ORDINARY, 2, 5000)
    b = [int(v) for v in rng.permutation(DTYPE_BYTES)]
    e = [int(v) for v in rng.choice(EXPANSIONS, size=ORDINARY, replace=False)]
    d = _sizes(rng, ORDINARY, 16, 2000)           # a crossover found by a loop takes expansion * d_model steps
    if function == "attention_memory_bytes":
        return list(zip(n, b))
    if function == "ffn_memory_bytes":
        return list(zip(n, d, b, e))
    return list(zip(d, b, e))                           # crossover_length(d_model, dtype_bytes, expansion)


def agree(got, want, rtol: float = RTOL) -> bool:
    """The same values as returned: same structure and shape, a truth-value array only equal to another,
    NaN and inf in the same places, and the finite values within a tolerance relative to the values
    compared (never an absolute one, so 0 matches only a number that is 0 at this scale). Counts are
    compared with ``COUNT_RTOL``: exact, up to the rounding of a float."""
    if isinstance(want, (tuple, list)):
        return (isinstance(got, (tuple, list)) and len(got) == len(want)
                and all(agree(g, w, rtol) for g, w in zip(got, want)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g, w = np.asarray(got), np.asarray(want)
            if (g.dtype == bool) != (w.dtype == bool):
                return False
            g, w = g.astype(float), w.astype(float)
    except Exception:  # noqa: BLE001 - anything the student returned that is not numeric
        return False
    if g.shape != w.shape or not np.array_equal(np.isnan(g), np.isnan(w)):
        return False
    inf = np.isinf(w) | np.isinf(g)
    if not np.array_equal(g[inf], w[inf]):
        return False
    g, w = g[~inf & ~np.isnan(w)], w[~inf & ~np.isnan(w)]
    scale = float(np.max(np.abs(w), initial=0.0))
    return bool(np.all(np.abs(g - w) <= rtol * (np.abs(w) + ATOL / RTOL * scale)))
