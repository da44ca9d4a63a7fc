"""A tour of the chapter's numbers, computed by the engine (``python -m solutions.tour``)."""
from __future__ import annotations

import numpy as np

from . import causal_attention, cross_attention, crossover_length, memory_table
from .variance import peakedness, variance_sweep


def _ex1() -> list[str]:
    lines = ["Exercise 1: largest softmax weight, 6 queries and keys (default_rng(1))",
             f"  {'d_k':>5} {'unscaled':>9} {'scaled':>8}"]
    for d_k in (8, 512):
        raw, scaled = peakedness(d_k)
        lines.append(f"  {d_k:>5} {raw:>9.4f} {scaled:>8.4f}")
    lines += ["  score std vs d_k (default_rng(0), q then k of shape (5, d_k))",
              f"  {'d_k':>5} {'raw':>6} {'sqrt(d_k)':>9} {'scaled':>7}"]
    for row in variance_sweep((8, 64, 512, 4096)):
        lines.append(f"  {row.d_k:>5} {row.raw_std:>6.1f} {row.theory_std:>9.1f} {row.scaled_std:>7.2f}")
    return lines


def _ex2() -> list[str]:
    rng = np.random.default_rng(0)
    Q, K = rng.normal(size=(5, 8)), rng.normal(size=(5, 8))
    _, w = causal_attention(Q, K, K)
    lines = ["Exercise 2: causal weights (default_rng(0), Q and K of shape (5, 8))"]
    lines += ["  " + " ".join(f"{v:.3f}" for v in row[: i + 1]) for i, row in enumerate(w)]
    return lines


def _ex3() -> list[str]:
    lines = ["Exercise 3: activation memory, d_model = 4096, fp16 (GB)",
             f"  {'n':>6} {'attention':>9} {'FFN':>6} {'ratio':>6}"]
    for n, att, ffn, ratio in memory_table():
        lines.append(f"  {n:>6} {att:>9.2f} {ffn:>6.2f} {ratio:>6.2f}")
    lines.append(f"  crossover length: {crossover_length(4096)}")
    return lines


def _ex4() -> list[str]:
    rng = np.random.default_rng(0)
    dec, enc = rng.normal(size=(4, 8)), rng.normal(size=(6, 8))
    out, w = cross_attention(dec, enc, enc)
    return ["Exercise 4: decoder length 4 attends to encoder length 6, d = 8",
            f"  output {out.shape}, weights {w.shape}"]


def tour() -> str:
    return "\n\n".join("\n".join(part()) for part in (_ex1, _ex2, _ex3, _ex4))


def main() -> None:
    print(tour())


if __name__ == "__main__":
    main()
