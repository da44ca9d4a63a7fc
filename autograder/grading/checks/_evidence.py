"""A point needs evidence: a property point is paid only to code shown to compute from its inputs.

A property check (rows that sum to 1, an axis honoured, stability, no future leakage, no causal mask,
following dtype_bytes) judges one property of the answer. Random rows normalised to 1, the inputs
handed back, the identity, uniform weights or code that is right only on the visible tests' small
shapes can have such a property without computing anything. Before the property is judged, the
function is called on fresh inputs of sizes no visible test uses (10 to 39) and must be shown to
compute there: right there; or NaN there (NaN is the NaN checks' to charge, never "computes nothing");
or else deterministic on the same inputs, not one of its inputs handed back, and dependent on Q and K
(the weights) or on Q and on K or V (the output), each changed alone. A wrong formula that computes
(unscaled scores, a wrong axis) passes; each such mistake is charged by the check that owns it.

The questions are declared with the check's (``attention_questions``, ``array_questions``) and their
replies read only as far as the judgement needs them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import solutions as S

from ..asking import Question
from ...tolerance import close, same_values
from ._base import normal

FRESH = (10, 40)          # sizes no check and no visible test draws
# Each check draws its fresh n_q from a band of its own, so a cache keyed on n (a mask kept between calls
# and changed in place) has never seen it: such state is the value check's to charge, once.
BANDS = {"the values": 0, "rows that sum to 1": 1, "stability": 2, "no future leakage": 3, "no causal mask": 3,
         "the first row": 4, "no NaN": 5}
ARGS = ("Q", "K", "V")


def fresh_case(rng, *, square: bool = False, judged: str = "the values"):
    """Q, K, V with fresh sizes, all different (n_q == n_k when square); n_q from the check's own band."""
    low = 10 + 10 * BANDS[judged]
    n_q = int(rng.integers(low, low + 10))
    n_k, d_k, d_v = (int(v) for v in rng.choice([v for v in range(*FRESH) if v != n_q], size=3, replace=False))
    n_k = n_q if square else n_k
    return normal(rng, n_q, d_k), normal(rng, n_k, d_k), normal(rng, n_k, d_v)


@dataclass(frozen=True)
class AttentionEvidence:
    """The fresh case, then the same again, then each of Q, K and V changed alone (five questions)."""
    case: tuple
    moved: tuple
    questions: tuple


def attention_questions(name: str, rng, *, square: bool = False, judged: str = "the values") -> AttentionEvidence:
    case = fresh_case(rng, square=square, judged=judged)
    moved = tuple(tuple(normal(rng, *a.shape) if k == i else a for k, a in enumerate(case)) for i in range(3))
    questions = (Question(name, case), Question(name, case)) + tuple(Question(name, m) for m in moved)
    return AttentionEvidence(case, moved, questions)


def attention_unproven(evidence: AttentionEvidence, got: list, read, reference, *, part: int) -> str | None:
    """None when the function is shown to compute its answer's ``part`` (0 output, 1 weights) from its inputs;
    else a sentence saying what the calls showed instead. ``read(reply)`` gives (output, weights)."""
    what, case = ("output", "weights")[part], evidence.case
    one = read(got[0])[part]
    if close(one, reference(*case)[part]) or _has_nan(one):
        return None
    shapes = ", ".join(f"{a} {x.shape}" for a, x in zip(ARGS, case))
    if not same_values(read(got[1])[part], one):
        return f"returns other {what} when called twice with the same inputs ({shapes})"
    back = _handed_back(one, dict(zip(ARGS, case)))
    if back:
        return f"returns its argument {back} as the {what}"
    moved = {arg: not same_values(read(got[2 + i])[part], one) for i, arg in enumerate(ARGS)}
    if not any(moved.values()):
        return (f"returns the same {what} for different inputs (calls with other values of the same, fresh "
                f"shapes: {shapes})")
    needs = ("Q", "K") if part == 1 else ("Q", "K or V")
    missing = [n for n in needs if not any(moved[a] for a in n.split(" or "))]
    if missing:
        verb = "do" if part == 1 else "does"
        return f"returns {what} that {verb} not change when {' or '.join(missing)} changes (with {shapes})"
    return None


@dataclass(frozen=True)
class ArrayEvidence:
    """softmax's fresh input, the same again, then another of the same shape (three questions)."""
    fresh: np.ndarray
    kwargs: dict
    questions: tuple


def array_questions(rng, x: np.ndarray, **kwargs) -> ArrayEvidence:
    fresh = normal(rng, *rng.choice(np.arange(*FRESH), size=max(x.ndim, 1), replace=False), scale=2.0)
    other = fresh + normal(rng, *fresh.shape)
    given = tuple(kwargs.items())
    questions = tuple(Question("softmax", (a,), given) for a in (fresh, fresh, other))
    return ArrayEvidence(fresh, kwargs, questions)


def array_unproven(evidence: ArrayEvidence, got: list, read) -> str | None:
    """The same for a function of one array (softmax): None when shown to compute from x."""
    fresh = evidence.fresh
    one = read(got[0])
    if close(one, S.softmax(fresh, **evidence.kwargs)) or _has_nan(one):
        return None
    if not same_values(read(got[1]), one):
        return f"returns other values when called twice with the same x (of shape {fresh.shape})"
    if _handed_back(one, {"x": fresh}):
        return "returns its argument x (or x rearranged) as the result"
    if same_values(read(got[2]), one):
        return (f"returns the same values for different inputs (two calls with other values of the same, fresh "
                f"shape {fresh.shape})")
    return None


def _has_nan(value) -> bool:
    arr = np.asarray(value, dtype=float)
    return bool(np.isnan(arr).any())


def _handed_back(value, inputs: dict) -> str | None:
    """The name of the input the value is (itself, transposed, or its axes in another order), or None."""
    value = np.asarray(value, dtype=float)
    for label, x in inputs.items():
        if value.shape == x.shape and same_values(value, x):
            return label
        if value.ndim == x.ndim and sorted(value.shape) == sorted(x.shape) and same_values(value, np.transpose(x)):
            return label
    return None
