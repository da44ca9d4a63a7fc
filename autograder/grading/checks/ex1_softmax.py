"""ex1_softmax: the student's softmax(x, axis).

Three properties, each charged once: the values along the last axis, that the
``axis`` argument is honoured, and stability for large inputs.
"""
from __future__ import annotations

import numpy as np

import solutions as S

from .. import coverage
from ..asking import Question
from ..coverage import as_float64
from ..references import memoised
from ..student import StudentError, to_array
from ...tolerance import HalfPrecision, close
from ._base import (Check, Deferred, FollowUp, Outcome, Plan, Raised, answer, credited, fail, mismatch, nan_first, normal,
                    ok, stateful)
from ._evidence import array_evidence, unproven
from ._state import AskAlone, Varied, mutation_problem, repeat, repeat_questions, state_problem

SOFTMAX = memoised(S.softmax)          # the reference, computed once per input (references.py)
NAME = "softmax"


def _array(raw):
    return to_array(raw, "the result of `softmax`")


def _value(reply, x, kwargs=None, said: str | None = None):
    """The student's softmax of x as an array; an exception it raised is restated with the input's shape (and
    ``said``: what is particular about it: a case of the coverage table)."""
    try:
        return _array(reply.get())
    except StudentError as exc:
        raise _restated(exc, x, kwargs or {}, said) from None


def _restated(exc: StudentError, x, kwargs, said: str | None = None) -> Exception:
    """The error said with the input's shape; on a coverage case (``said``), with what is particular about it and
    what the designed probes show (``Raised``)."""
    if exc.raised in (None, "NotImplementedError"):
        return exc
    axis = kwargs.get("axis")
    given, along = (f" and axis={axis}", f"axis {axis}") if axis is not None else ("", "the last axis")
    on = f" ({said})" if said else ""
    message = (f"{str(exc).rstrip('.')}{on}. Called with x of shape {x.shape}{given}, it should return an array of "
               f"shape {x.shape} whose slices along {along} sum to 1.")
    if said:
        return Deferred(Raised(NAME, (as_float64((x,))[0], *((axis,) if axis is not None else ())), message, exc))
    return StudentError(message, exc.diagnosis, exc.raised)


def _ask(x, **kwargs) -> Question:
    return Question(NAME, (x,), tuple(kwargs.items()))


def _rows_plan(rng) -> Plan:
    """The values along the last axis (the default axis): on the check's input, on another of the same shape and
    on the first again (state is charged here), then on one row, one column and a fresh, larger shape."""
    x = normal(rng, *rng.integers(2, 7, size=2), scale=2.0)
    x2 = normal(rng, *x.shape, scale=2.0)
    m = int(rng.integers(2, 7))
    more = [normal(rng, 1, m, scale=2.0), normal(rng, m, 1, scale=2.0), normal(rng, *rng.integers(10, 40, size=2))]
    sized = [Question(NAME, (a,), draws="size-one" if 1 in a.shape else None) for a in more]
    covered = coverage.cases(NAME, (x,), rng) + [Question(NAME, (normal(rng, int(rng.integers(2, 9)), scale=2.0),),
                                                         draws="one-d")]
    evidence = array_evidence(rng, x)
    return Plan(repeat_questions(NAME, (x,), [(x2,)]) + sized + covered + list(evidence.questions),
                x=x, x2=x2, more=more, covered=covered, evidence=evidence)


def _rows(plan, got):
    x, x2 = plan.x, plan.x2
    try:
        r = repeat(NAME, _array, got[:3], (x,), [(x2,)])
    except StudentError as exc:
        raise _restated(exc, x, {}) from None
    if r.first.shape != x.shape:
        return mismatch(NAME, (x,), r.first, f"softmax of a {x.shape} array returned shape {r.first.shape}; "
                        "it should keep the input's shape.")
    varied = [Varied((x2,), SOFTMAX(x2), "a new x", ("x",))]
    problem = state_problem(NAME, r, SOFTMAX(x), varied, ("values",))
    if problem:
        return (nan_first(NAME, (x,), r.first, {"values": r.first}) or _nothing(plan, got, "the values")
                or _stateful(problem))
    answers = ((x, r.first, None), (x2, r.varied[0], None))
    answers += tuple((a, _value(g, a), None) for a, g in zip(plan.more, got[3:6]))
    wrong = _first_wrong(plan, got, answers)
    if wrong:
        return wrong
    problem = mutation_problem(NAME, r.changed)          # before the coverage cases: it may be why they fail
    if problem:
        return credited(fail(problem), HALF)
    try:
        covered = tuple((q.args[0], _value(g, q.args[0], said=SAID.get(q.draws)), q.draws)
                        for q, g in zip(plan.covered, got[6:]) if q.draws)
    except Deferred as exc:                              # right on every ordinary x: half, whatever raised
        raise Deferred(credited(exc.pending, HALF)) from None
    except StudentError as exc:
        return credited(Outcome(False, str(exc), exc.diagnosis, stage=exc.stage), HALF)
    wrong = _first_wrong(plan, got, covered)
    return credited(wrong, HALF) if wrong else ok()


HALF = 0.5      # the value check's credit when it is right on every ordinary x and wrong on some of the table's
                # cases (a 1-D x, an integer one, ties ...), or leaves x changed in place


SAID = {"ties": "with ties: rows of repeated values and a constant row", "integer": "with an integer x",
        "float32": "with a float32 x", "float16": "with a float16 x", "one-d": "with a 1-D x",
        "same-id": "with new values in the very array of an earlier call (the same id())"}


def _first_wrong(plan, got, answers):
    for arg, value, drawn in answers:
        value = value.view(HalfPrecision) if drawn == "float16" else value
        if not close(value, SOFTMAX(as_float64((arg,))[0])):
            return _wrong_values(plan, got, arg, value, drawn)
    return None


def _stateful(problem):
    if not isinstance(problem, AskAlone):
        return stateful(problem)
    return FollowUp(NAME, [[problem.args]], lambda probe: stateful(problem.said(answer(probe([problem.args])[0]))))


def _wrong_values(plan, got, x, value, drawn=None):
    nothing = _nothing(plan, got, "the values")
    if nothing:
        return nothing
    said = f" ({SAID[drawn]})" if drawn in SAID else ""
    if value.shape != x.shape:
        return fail(f"softmax of a {x.shape} array{said} returned shape {value.shape}; it should keep the input's "
                    "shape (a size of 1 is still an axis).")
    return mismatch(NAME, as_float64((x,)), value, f"softmax(x) of an x of shape {x.shape}{said} does not match "
                    "exp(x) / sum(exp(x)) along the last axis (each row should sum to 1).")


def _nothing(plan, got, judged: str):
    """None when softmax is shown to compute its values from x (``_evidence.py``); else the failure that
    says it is not."""
    ev = plan.evidence
    got = got[-len(ev.questions):]
    said = unproven(ev, got, lambda reply: _value(reply, ev.case[0], ev.kwargs), SOFTMAX)
    if said is None:
        return None
    what = "from x alone (random numbers, or state kept between calls)" if said.random else "from x"
    return Outcome(False, f"`softmax` {said.said}: it does not compute its values {what}, so this check ({judged}) "
                   "earns nothing. Compute exp(x - max) / sum(exp(x - max)) along `axis`.",
                   stage="state" if said.random else "scores")


def _axis_plan(rng) -> Plan:
    """softmax(x, axis=a) is right, or at least equals the student's own last-axis softmax moved to axis a (then
    the values are the first check's to charge, and the axis is honoured)."""
    x = normal(rng, *rng.choice(np.arange(2, 7), size=3, replace=False), scale=2.0)
    evidence = array_evidence(rng, x, axis=-1)
    asked = [_ask(x, axis=a) for a in AXES] + [Question(NAME, (np.moveaxis(x, a, -1),), draws="batch") for a in AXES]
    defaults = [_ask(x, axis=1), Question(NAME, (x,), draws="defaults-after")]   # the default, right after axis=1
    return Plan(list(evidence.questions) + asked + defaults, x=x, evidence=evidence)


AXES = (0, 1, -1)


def _axis(plan, got):
    x = plan.x
    nothing = _nothing(Plan(evidence=plan.evidence), got[:len(plan.evidence.questions)], "honouring `axis`")
    if nothing:
        return nothing
    for k, axis in enumerate(AXES):
        at = len(plan.evidence.questions)
        value = _value(got[at + k], x, {"axis": axis})
        if close(value, SOFTMAX(x, axis=axis)) or _honours_axis(x, axis, value, got[at + 3 + k]):
            continue
        return mismatch(NAME, (x, axis), value, f"softmax(x, axis={axis}) on a 3-D array is wrong: "
                        f"the slices along axis {axis} should each sum to 1.")
    given = {axis: _value(got[at + k], x, {"axis": axis}) for k, axis in enumerate(AXES)}
    return _default_after(x, given, _value(got[-1], x))


def _default_after(x, given: dict, default):
    """Called without ``axis`` right after a call with axis=1, softmax normalises along the last axis, as its own
    call with axis=-1 did (whether that is right is the value check's to say). One that takes the earlier call's
    axis keeps state between calls; a default that is another axis whatever came before is the value check's
    to charge (it calls softmax(x) without `axis`)."""
    if default.shape == given[-1].shape and close(default, given[-1]):
        return ok()
    if default.shape == given[1].shape and close(default, given[1]) and not close(given[1], given[-1]):
        return fail(f"softmax(x) without `axis`, called right after softmax(x, axis=1), gives what that call gave, not "
                    f"softmax(x, axis=-1) (x of shape {x.shape}): it keeps the axis of an earlier call. Give the "
                    "parameter its default in the `def` line (`def softmax(x, axis=-1)`) and keep no axis between calls.")
    return ok("ok (its default axis is charged by the value check, which calls softmax(x) without `axis`)")


def _honours_axis(x, axis, value, reply) -> bool:
    moved = np.moveaxis(x, axis, -1)
    last = _value(reply, moved)
    wrong_anyway = not close(last, SOFTMAX(moved))
    return wrong_anyway and last.shape == moved.shape and close(value, np.moveaxis(last, -1, axis))


def _stable_plan(rng) -> Plan:
    """Inputs near 1e4, and rows thousands apart each spread over a few units (``coverage.row_offsets``), give
    finite, right values; a mistake that shows on ordinary inputs too is not charged again here."""
    x = normal(rng, 3, 5)
    large = ((x * 1e4, "inputs near 1e4"), (coverage.row_offsets(x, rng), OFFSETS))
    evidence = array_evidence(rng, x)
    asked = [Question(NAME, (large[0][0],), draws="large"), Question(NAME, (large[1][0],), draws="row-offsets")]
    return Plan(asked + [_ask(x)] + list(evidence.questions), x=x, large=large, evidence=evidence)


OFFSETS = "rows thousands apart, each spread over a few units"


def _stable(plan, got):
    x = plan.x
    values = []
    for (arg, said), reply in zip(plan.large, got[:2]):
        with np.errstate(all="ignore"):
            value = _value(reply, arg, said=said)
        if not np.all(np.isfinite(value)):
            return mismatch(NAME, (arg,), value, f"softmax of {said} gives NaN or inf.")
        values.append(value)
    if all(close(v, SOFTMAX(arg)) for v, (arg, _) in zip(values, plan.large)):
        return _nothing(plan, got, "stability") or ok()
    ordinary = _value(got[2], x)
    if not close(ordinary, SOFTMAX(x)):                # wrong anyway: the value check's to charge
        return _nothing(plan, got, "stability") or ok()
    (arg, said), value = next(((a, s), v) for v, (a, s) in zip(values, plan.large) if not close(v, SOFTMAX(a)))
    rows = said == OFFSETS                             # right on the same rows near 0: the stability of each row
    return mismatch(NAME, (arg,), value, f"softmax of {said} is wrong, although it is right on ordinary inputs"
                    f"{_ROWS if rows else ''}.", observed="softmax" if rows else None)


_ROWS = (": adding a constant to a row leaves its softmax, so each row's softmax here is that of the row moved "
         "to near 0; subtract each row's own maximum before exp()")


rows_sum_to_one = Check("rows_sum_to_one", _rows_plan, _rows)
any_axis = Check("any_axis", _axis_plan, _axis)
stable_for_large_inputs = Check("stable_for_large_inputs", _stable_plan, _stable)
