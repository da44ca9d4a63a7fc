"""What the student's causal mask hides, read from one ordinary-sized mask they return.

Used when no catalogue entry for ``causal_mask`` is proven (a mask checked first at n = 1 says
little: [[-inf]] is the diagonal masked, a k = -1 mask and an all -inf mask alike). The mask is
asked for at ``SIZE`` and its regions described: the diagonal, the past below it, the future
above it, and the values on the allowed positions.
"""
from __future__ import annotations

import numpy as np

from .stages import Localisation

SIZE = 5
HIDDEN_AT_MOST = -1e9        # as the mask check: -inf, or a large finite negative such as -1e9


def localise_mask(probe) -> Localisation | None:
    if probe is None:
        return None
    m = probe([(SIZE,)])[0]
    if isinstance(m, Exception) or np.shape(m) != (SIZE, SIZE):
        return None
    m = np.asarray(m)
    if m.dtype == bool:
        return Localisation("mask", f"causal_mask({SIZE}) returns truth values (True where a position may "
                            "look): a keep-mask, for np.where or indexing; this exercise asks for the mask that is "
                            "added to the scores, 0.0 where allowed and -inf above the diagonal.")
    hidden = m <= HIDDEN_AT_MOST
    ones = np.ones((SIZE, SIZE), dtype=bool)
    diagonal, past, future = np.eye(SIZE, dtype=bool), np.tril(ones, -1), np.triu(ones, 1)
    wrong = [what for what, bad in (
        ("hides the diagonal", hidden[diagonal].any()),
        ("hides positions below the diagonal (the past)", hidden[past].any()),
        ("leaves positions above the diagonal (the future) unhidden", (~hidden[future]).any()),
        ("puts values other than 0 on positions it does not hide", np.any(m[~hidden & ~future] != 0)),
    ) if bad]
    if not wrong:
        return None
    said = ", ".join(wrong[:-1]) + (" and " if len(wrong) > 1 else "") + wrong[-1]
    return Localisation("mask", f"causal_mask({SIZE}) {said}: a causal mask hides exactly the positions "
                        "above the diagonal (j > i) and is 0 everywhere else.")
