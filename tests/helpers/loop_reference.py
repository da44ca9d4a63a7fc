"""An independent float64 attention written as plain loops (no numpy matmul, no engine code)."""
from __future__ import annotations

import math


def loop_softmax(row):
    finite = [x for x in row if x != -math.inf]
    if not finite:
        return [0.0] * len(row)
    m = max(finite)
    e = [math.exp(x - m) if x != -math.inf else 0.0 for x in row]
    s = sum(e)
    return [x / s for x in e]


def loop_attention(Q, K, V, mask=None, scale=None):
    """Q, K, V as nested lists (or 2-D arrays); mask additive (n_q, n_k) or None."""
    n_q, d_k, n_k, d_v = len(Q), len(Q[0]), len(K), len(V[0])
    scale = 1 / math.sqrt(d_k) if scale is None else scale
    weights, out = [], []
    for i in range(n_q):
        scores = []
        for j in range(n_k):
            s = sum(float(Q[i][t]) * float(K[j][t]) for t in range(d_k)) * scale
            scores.append(s + (float(mask[i][j]) if mask is not None else 0.0))
        w = loop_softmax(scores)
        weights.append(w)
        out.append([sum(w[j] * float(V[j][c]) for j in range(n_k)) for c in range(d_v)])
    return out, weights


def loop_causal(n_q, n_k):
    return [[0.0 if j <= i else -math.inf for j in range(n_k)] for i in range(n_q)]
