"""A point needs evidence: a property point is paid only to code shown to compute from its inputs.

A property check (rows that sum to 1, an axis honoured, stability, no future leakage, no causal mask, the
first row, no NaN) judges one property of the answer. Random rows (seeded by a hash of the inputs or not),
the inputs handed back, the identity, uniform weights, lookups of the visible values or code that is right
only on the visible tests' small shapes can have such a property without computing anything. Before the
property is judged, the function is asked about a fresh input of sizes no visible test uses (10 to 39) and
must be shown to compute there: right there; or NaN there (NaN is the NaN checks' to charge, never "computes
nothing"); or else the same twice, not one of its inputs handed back, and satisfying the metamorphic relations
every computing implementation satisfies (``relations.EVIDENCE``: a new Q moves the weights, V scaled scales
the output, a constant added to every score or the keys in another order leave them as the relations say).
A wrong formula that computes (unscaled scores, a wrong axis, a wrong mask) passes; each such mistake is
charged by the check that owns it.

The questions are declared with the check's (``evidence``) and their replies read only as far as the
judgement needs them: the first call is asked with the check's questions, the rest (asked again, the relations)
only when the first answer is not the engine's (``runner``: in the next batch, the check then judged again).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import solutions as S

from ..asking import NotYet, Question
from ..references import memoised
from ..relations import EVIDENCE, laid_out, relation
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


def fresh_array(rng, ndim: int) -> np.ndarray:
    return normal(rng, *rng.choice(np.arange(*FRESH), size=max(ndim, 1), replace=False), scale=2.0)


@dataclass(frozen=True)
class Evidence:
    """A fresh input (``case``), asked twice, then the inputs of every relation ``relations.EVIDENCE`` names for
    the function (``related``: name -> (inputs, what the relation reads)); ``kwargs``: softmax's axis."""
    function: str
    case: tuple
    kwargs: dict
    related: dict
    questions: tuple


def evidence(function: str, rng, case: tuple, **kwargs) -> Evidence:
    related, questions = {}, [case, case]
    for name in (n for group in EVIDENCE[function] for n in group):
        inputs, kept = relation(name, None if function == "softmax" else 1).derive(case, rng)
        related[name] = (len(questions), inputs, kept)
        questions += inputs
    given = tuple(kwargs.items())
    return Evidence(function, case, kwargs, related, tuple(Question(function, tuple(a), given) for a in questions))


def attention_evidence(name: str, rng, *, square: bool = False, judged: str = "the values") -> Evidence:
    return evidence(name, rng, fresh_case(rng, square=square, judged=judged))


def array_evidence(rng, x: np.ndarray, **kwargs) -> Evidence:
    return evidence("softmax", rng, (fresh_array(rng, np.ndim(x)),), **kwargs)


@dataclass(frozen=True)
class Unproven:
    """What the evidence questions showed instead of a computation: ``said`` (after the function's name), and
    whether the answers changed between identical calls (``random``: then not a function of the inputs alone)."""
    said: str
    random: bool = False


def unproven(ev: Evidence, got: list, read, reference, part: int | None = None) -> Unproven | None:
    """None when the function is shown to compute (``part`` of) its answer from its inputs (attention: 1 the
    weights, 0 the output); else a sentence (after the function's name) saying what the calls showed instead.
    ``read(reply)`` reads an answer as the check does (it may raise the check's StudentError);
    ``reference(*case)`` is the right answer."""
    one = read(got[0])
    want = reference(*ev.case, **ev.kwargs)
    mine, right = (one, want) if part is None else (_part(one, part), want[part])
    if _right(mine, right) or _has_nan(mine):
        return None
    if isinstance(got[1], NotYet):        # the rest is asked in the next batch, and the check judged again then
        got[1].held.needed = True
        return None
    if not same_values(read(got[1]), one):
        return Unproven(f"returns other {_what(ev)} when called twice with the same inputs ({_shapes(ev)})", True)
    back = _handed_back(mine, dict(zip(ARGS, ev.case)) if ev.function != "softmax" else {"x": ev.case[0]})
    if back:
        part_said = ("the output", "the weights")[part] if part is not None else "its result"
        return Unproven(f"returns its argument {back} as {part_said}")
    if ev.function != "softmax" and laid_out(one, ev.case) is None:
        return Unproven(f"returns arrays of shapes {_shape_of(one)} for Q, K, V of shapes {_shapes(ev)}")
    for group in EVIDENCE[ev.function]:
        if not any(_holds(ev, name, part, got, read, one) for name in group):
            said = relation(group[0], part).said
            return Unproven(f"returns {said[:-1]}; with {_shapes(ev)})" if said.endswith(")") else
                            f"returns {said} (with {_shapes(ev)})")
    return None


def _part(value, part: int):
    """The part of an answer (a pair) as returned; the whole answer when it is no pair."""
    return value[part] if isinstance(value, tuple) and len(value) == 2 else value


def _holds(ev: Evidence, name: str, part: int | None, got: list, read, one) -> bool:
    at, inputs, kept = ev.related[name]
    answers = [one] + [read(got[at + k]) for k in range(len(inputs))]
    if ev.function != "softmax":
        answers = [laid_out(a, args) for a, args in zip(answers, [ev.case, *inputs])]
        if any(a is None for a in answers):
            return False
    try:
        with np.errstate(all="ignore"):
            return bool(relation(name, part).holds(ev.case, answers, kept))
    except (ValueError, IndexError, TypeError):
        return False


def _right(value, want) -> bool:
    if isinstance(want, tuple):
        return isinstance(value, tuple) and len(value) == len(want) and all(close(v, w) for v, w in zip(value, want))
    return close(value, want)


def _what(ev: Evidence) -> str:
    return "values" if ev.function == "softmax" else "results"


def _shapes(ev: Evidence) -> str:
    if ev.function == "softmax":
        return f"x of shape {ev.case[0].shape}"
    return ", ".join(f"{a} {x.shape}" for a, x in zip(ARGS, ev.case))


def _shape_of(value) -> str:
    parts = value if isinstance(value, tuple) else (value,)
    return " and ".join(str(np.shape(p)) for p in parts)


def _has_nan(value) -> bool:
    parts = value if isinstance(value, tuple) else (value,)
    return any(bool(np.isnan(np.asarray(p, dtype=float)).any()) for p in parts)


def _handed_back(value, inputs: dict) -> str | None:
    """The name of the input the value is (itself, transposed, or its axes in another order), or None."""
    value = np.asarray(value, dtype=float)
    for label, x in inputs.items():
        if value.shape == x.shape and same_values(value, x):
            return label
        if value.ndim == x.ndim and sorted(value.shape) == sorted(x.shape) and same_values(value, np.transpose(x)):
            return label
    return None


_SOFTMAX = memoised(S.softmax)


def softmax_reference(x, **kwargs):
    return _SOFTMAX(x, **kwargs)
