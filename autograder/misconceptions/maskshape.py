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
UNDERFLOW = -745.0           # exp() of anything below this is 0 in float64 (BERT's -1e4 hides there)


def localise_mask(probe) -> Localisation | None:
    if probe is None:
        return None
    m = probe([(SIZE,)])[0]
    if isinstance(m, Exception) or np.shape(m) != (SIZE, SIZE):
        return None
    m = np.asarray(m)
    if m.dtype == bool:
        return _truth_values(m)
    hidden = m <= HIDDEN_AT_MOST
    weak = ~hidden & (m < UNDERFLOW)              # exp() of it is 0 in float64: hidden on ordinary scores
    ones = np.ones((SIZE, SIZE), dtype=bool)
    diagonal, past, future = np.eye(SIZE, dtype=bool), np.tril(ones, -1), np.triu(ones, 1)
    if np.all(m[~future] == 0) and np.all(hidden[future] | weak[future]) and weak[future].any():
        value = float(m[future][weak[future]][0])
        return Localisation("mask", f"causal_mask({SIZE}) hides the future with {value:g}, not -inf: exp({value:g}) "
                            "is 0 in float64, so it hides j > i on ordinary scores, but not once scores reach about "
                            f"{-value:.0e} in size. Use -inf above the diagonal (or a value as large as -1e9).")
    hidden |= weak
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


def _truth_values(m) -> Localisation:
    """A boolean mask, described by what its True means (a keep-mask is True where a position may look)."""
    ones = np.ones(m.shape, dtype=bool)
    if np.array_equal(m, np.tril(ones)):
        meaning = "True where a position may look: a keep-mask, for np.where or indexing"
    elif np.array_equal(m, np.triu(ones, 1)):
        meaning = "True where a position is hidden, above the diagonal: a mask of the hidden positions, for np.where"
    else:
        meaning = f"True at {int(m.sum())} of the {m.size} positions"
    return Localisation("mask", f"causal_mask({m.shape[0]}) returns truth values ({meaning}); this exercise asks for "
                        "the mask that is added to the scores, 0.0 where allowed and -inf above the diagonal.")
