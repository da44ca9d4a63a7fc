"""Why divide by sqrt(d_k): the spread of raw dot products grows with d_k."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .softmax import softmax


@dataclass(frozen=True)
class SweepRow:
    d_k: int
    raw_std: float          # std of q . k over all (rows x rows) pairs
    scaled_std: float       # std of q . k / sqrt(d_k)
    theory_std: float       # sqrt(d_k): the std of a sum of d_k unit-variance products
    max_weight_raw: float   # largest softmax weight without scaling
    max_weight_scaled: float


def variance_sweep(d_ks, rows: int = 5, seed: int = 0) -> list[SweepRow]:
    """One generator; for each d_k in turn draw q then k of shape (rows, d_k)."""
    rng = np.random.default_rng(seed)
    out = []
    for d_k in d_ks:
        q = rng.normal(0, 1, (rows, d_k))
        k = rng.normal(0, 1, (rows, d_k))
        raw = q @ k.T                                   # (rows, rows)
        scaled = raw / math.sqrt(d_k)
        out.append(SweepRow(d_k, float(raw.std()), float(scaled.std()), math.sqrt(d_k),
                            float(softmax(raw).max()), float(softmax(scaled).max())))
    return out


def peakedness(d_k: int, n: int = 6, seed: int = 1) -> tuple[float, float]:
    """Largest weight (unscaled, scaled) for Q then K drawn from a fresh default_rng(seed)."""
    rng = np.random.default_rng(seed)
    Q = rng.normal(0, 1, (n, d_k))
    K = rng.normal(0, 1, (n, d_k))
    raw = Q @ K.T
    return float(softmax(raw).max()), float(softmax(raw / math.sqrt(d_k)).max())
