"""ex2_mask: causal_mask(n) is an (n, n) float array, 0 on and below the diagonal, -inf above."""
from __future__ import annotations

import numpy as np

from dataclasses import dataclass

from ..asking import Question
from ..student import StudentError, to_array
from ...tolerance import same_values
from ...misconceptions import entries_for
from ._attention import REFERENCE
from ._base import Check, Later, Outcome, Pending, Plan, answer, fail, mismatch, ok
from ._evidence import Evidence, attention_evidence, unproven

NAME = "causal_mask"
SIZES = (1, 2, 7, 64)
AGAIN = 7               # asked twice more at the end: the same n gives the same mask (state)
HIDDEN_AT_MOST = -1e9   # -inf is the contract; a large finite negative such as -1e9 also hides a key


def _ask(rng, again: bool = False) -> Plan:
    asked = [Question(NAME, (n,), draws="size-one" if n == 1 else None) for n in SIZES]
    asked += [Question(NAME, (AGAIN,), draws="call-order")] * 2 if again else []
    return Plan(asked, attention=attention_evidence("causal_attention", rng, square=True) if again else None)


def _masks(plan, got):
    """(n, mask, its dtype) for each of SIZES in turn; a failed call raises where the check reaches it."""
    for n, reply in zip(SIZES, got):
        raw = reply.get()
        yield n, to_array(raw, f"causal_mask({n})"), getattr(raw, "dtype", None)


def _shape_and_dtype(plan, got):
    for n, m, dtype in _masks(plan, got):
        if m.shape != (n, n):
            return fail(f"causal_mask({n}) has shape {m.shape}; it should be ({n}, {n}).")
        if dtype is None or np.dtype(dtype).kind != "f":
            return fail(f"causal_mask({n}) has dtype {dtype}; it should be a float array so it can be "
                        "added to the scores (0.0 and -np.inf).")
    return ok()


def _values(plan, got):
    for n, m, dtype in _masks(plan, got):
        if m.shape != (n, n):
            raise StudentError(f"causal_mask({n}) has shape {m.shape}; it should be ({n}, {n}).")
        above = np.triu(np.ones((n, n), dtype=bool), 1)
        if np.all(m[~above] == 0) and np.all(m[above] <= HIDDEN_AT_MOST):
            continue
        bad = _first_bad(m, above)
        truth = dtype is not None and np.dtype(dtype) == bool         # a keep-mask's truth values stay so
        returned = m.astype(bool) if truth else m
        value = "NaN" if np.isnan(m[bad]) else str(returned[bad]) if truth else f"{m[bad]:g}"
        wrong = mismatch(NAME, (n,), returned, f"causal_mask({n})[{bad[0]}, {bad[1]}] is {value}; "
                         "entries on and below the diagonal should be 0 and entries above it -inf.")
        return ConstantMask(wrong, plan.attention) if _zeros(plan, got) else wrong
    return _same_again(got[len(SIZES):])


def _zeros(plan, got) -> bool:
    """Every mask asked of a size >= 2 is all zeros: what a stub returns, and the one constant mask the catalogue
    names (``mask-missing``). Another constant (ones, -inf) names nothing by itself and is localised as before."""
    masks = [m for n, m, _ in _masks(plan, got) if n >= 2]
    return all(m.shape == (n, n) for n, m in zip(SIZES[1:], masks)) and all(not np.any(m) for m in masks)


@dataclass
class ConstantMask(Later):
    """A mask of zeros everywhere names its family (``mask-missing``) only when the notebook's
    causal_attention is shown to compute (``_evidence``): then it is a mistake of code that computes. Next to an
    attention that computes nothing it is what do-nothing code returns, and only the mask stage is said."""
    pending: Pending
    evidence: Evidence
    function: str = "causal_attention"

    def questions(self) -> list[list[Question]]:
        return [list(self.evidence.questions)]

    def resolve(self, probe) -> Outcome:
        got = probe([q.args for q in self.evidence.questions])
        try:
            computes = unproven(self.evidence, got, answer, REFERENCE[self.function], part=1) is None
        except StudentError:
            computes = False
        if computes:           # zeros at every size asked are the family's every answer: nothing more to ask
            entry = next(e for e in entries_for(NAME) if e.id == "mask-missing")
            return Outcome(False, f"{self.pending.message} {entry.sentence}", diagnosis=entry.id,
                           details=self.pending.details)
        return Outcome(False, f"{self.pending.message} It holds 0 everywhere, whatever n, and "
                       "`causal_attention` is not shown to compute its weights from Q and K either.", stage="mask")


def _same_again(got):
    """A second call with the same n gives the same mask (state is charged here, with the values)."""
    first, again = (to_array(r.get(), f"causal_mask({AGAIN})") for r in got)
    if same_values(again, first):
        return ok()
    return fail(f"causal_mask({AGAIN}) returned another array when called again with the same n: its result "
                "changes between identical calls. Build the mask from n alone on every call (and never change a "
                "mask in place that a later call returns again).")


def _first_bad(m, above):
    wrong = np.where(above, ~(m <= HIDDEN_AT_MOST), m != 0)      # NaN is wrong on both sides
    return tuple(int(v) for v in np.argwhere(wrong)[0])


shape_and_dtype = Check("shape_and_dtype", _ask, _shape_and_dtype)
values = Check("values", lambda rng: _ask(rng, again=True), _values)
