"""Parts of an attention answer shown right where the answer as returned is wrong (issue 37, item 5): the value
check pays half for such a part (``_attention.HALF``), as for one of weights and output right everywhere.

- ``swapped_right``: both parts right on every ordinary input, returned as (weights, output): computed right,
  returned in the other order (the order is the shapes check's to charge, once);
- ``dropout_left_on``: every answer to the same inputs holds the right weights with a share of them (under half)
  zeroed and every other one times one factor c > 1 (1 / (1 - p)), the output that weights @ V, and the answers
  differ. The fitted parameters are p and c; random rows (seeded by a hash of the inputs or not) have no such
  factor, so they still earn nothing.
"""
from __future__ import annotations

import numpy as np

from ..coverage import as_float64
from ...tolerance import close, same_values
from ._base import Outcome, stateful


def swapped_right(reference, answers) -> bool:
    """Every answer ((args, (out, w), strict, drawn) as the value check reads them) is the reference's with its
    two parts in the other order."""
    for args, (out, w), _, _ in answers:
        want_out, want_w = reference(*as_float64(args))
        if out.shape != want_w.shape or w.shape != want_out.shape or not (close(out, want_w) and close(w, want_out)):
            return False
    return True


def dropout_left_on(name: str, reference, first: tuple, pairs: list) -> Outcome | None:
    """The failure that says so, when ``pairs`` (the answers to ``first`` asked twice) are dropout left on; else
    None."""
    Q, K, V = as_float64(first)
    want_out, want_w = reference(Q, K, V)
    factors = [_kept_times(w, want_w, out, V) for out, w in pairs]
    if any(f is None for f in factors) or not np.isclose(factors[0], factors[1]) or same_values(*pairs):
        return None
    share = 1.0 - 1.0 / factors[0]
    return stateful(f"`{name}` returns the right weights with some of them zeroed at random and the others times "
                    f"{factors[0]:.3g} (dropout with p = {share:.2g}, still on): rows no longer sum to 1 and each call "
                    "differs. Apply dropout only when training (default it off).",
                    student_weights=pairs[0][1] if np.ndim(pairs[0][1]) == 2 else [])


def _kept_times(w, want_w, out, V) -> float | None:
    """The one factor c > 1 with w = c * want_w wherever w is not 0 (zeroed: under half of them), and out = w @ V."""
    w, out = np.asarray(w, dtype=float), np.asarray(out, dtype=float)
    if w.shape != want_w.shape or out.shape != (len(w), V.shape[1]) or not close(out, w @ V):
        return None
    kept = w != 0
    if kept.mean() < 0.5 or not kept.any() or np.any(want_w[kept] <= 0):
        return None
    ratio = w[kept] / want_w[kept]
    c = float(np.median(ratio))
    return c if c > 1.0 + 1e-9 and np.allclose(ratio, c, rtol=1e-6) else None
