"""Checks shared by every (output, weights) attention function (exercises 1, 2 and 4): reading an answer, the
shapes and the values.

Each check charges its own property once: the shapes, the values, the rows'
normalisation, stability on large scores. A mistake that one check owns does not
fail the others (transposed weights cost the shapes and values, not the row sums).
The hidden cases cover the input space: a size of 1 in each dimension (the shapes check,
and the value check where the shapes are right), two widths d_k and fresh, larger sizes
(the value check). The value check also owns state (``_state.py``). The property checks
(``_properties.py``) earn nothing from a function not shown to compute from its inputs (``_evidence.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import solutions as S

from .. import coverage
from ..asking import Question
from ..coverage import as_float64
from ..references import memoised
from ..student import StudentError, to_pair
from ...tolerance import HalfPrecision, all_close, close, same_values
from ...misconceptions import diagnose_square, follow_ups, square_input
from ._base import (Check, Deferred, FollowUp, Outcome, Pending, Plan, Raised, answer, credited, fail, listified,
                    mismatch, nan_first, normal, ok, pick_sizes, question, stateful)
from ._evidence import attention_evidence, fresh_case, unproven
from ._parts import dropout_left_on, swapped_right
from ._state import AskAlone, Varied, mutation_problem, repeat, repeat_questions, state_problem

REFERENCE = {name: memoised(getattr(S, name))          # computed once per input, shared by the checks
             for name in ("scaled_dot_product_attention", "causal_attention", "cross_attention")}
ONE = {"n_q": "one query (n_q = 1: one decoder position)", "n_k": "one key (n_k = 1)", "d_k": "d_k = 1",
       "d_v": "d_v = 1"}


def case(rng, *, square: bool = False):
    """Q, K, V with n_q, n_k, d_k, d_v all different (n_q == n_k when square)."""
    n_q, n_k, d_k, d_v = pick_sizes(rng, 4, 2, 10)
    n_k = n_q if square else n_k
    return normal(rng, n_q, d_k), normal(rng, n_k, d_k), normal(rng, n_k, d_v)


def size_one_cases(rng, *, square: bool = False) -> list[tuple[str, tuple]]:
    """(dimension, Q K V) with that dimension of size 1 and the others different and at least 2 (n_q and
    n_k stay equal when square, so only d_k and d_v are 1 there: n = 1 is the single-token check's)."""
    out = []
    for dim in ("d_k", "d_v") if square else ("n_q", "n_k", "d_k", "d_v"):
        sizes = dict(zip(("n_q", "n_k", "d_k", "d_v"), pick_sizes(rng, 4, 2, 10)))
        sizes[dim] = 1
        if square:
            sizes["n_k"] = sizes["n_q"]
        out.append((dim, (normal(rng, sizes["n_q"], sizes["d_k"]), normal(rng, sizes["n_k"], sizes["d_k"]),
                          normal(rng, sizes["n_k"], sizes["d_v"]))))
    return out


def expected_shapes(Q, K, V) -> str:
    return (f"Called with Q {Q.shape}, K {K.shape} and V {V.shape}, it should return an output of shape "
            f"(n_q, d_v) = {(Q.shape[0], V.shape[1])} and weights of shape (n_q, n_k) = {(Q.shape[0], K.shape[0])}.")


def pair_of(name: str, reply, args: tuple, said: str | None = None, credit: float = 0.0):
    """(output, weights) of one reply; an exception the function raised is restated with the inputs' shapes (and
    ``said``: what is particular about them) and what inputs of the same sizes in another class show
    (``Restated``, once its questions are answered); ``credit``: the check's share where it runs and is right on
    inputs of another class (or on the ordinary ones, when it raised on one of the table's cases)."""
    try:
        return to_pair(reply.get(), name)
    except StudentError as exc:
        raise restated(name, exc, args, said, credit) from None


def restated(name: str, exc: StudentError, args: tuple, said: str | None = None, credit: float = 0.0) -> Exception:
    """The error said with the inputs' shapes; on a coverage case (``said``), with what is particular about them
    and what the designed probes show (``Raised``), else with what inputs of another class show (``Restated``)."""
    if exc.raised in (None, "NotImplementedError"):
        return exc
    if said:
        raised = Raised(name, as_float64(args), f"{str(exc).rstrip('.')} ({said}). {expected_shapes(*args)}", exc)
        return Deferred(credited(raised, credit))
    return Deferred(Restated(name, args, None, "", error=exc, right_elsewhere=credit))


@dataclass
class Restated(Pending):
    """The error with the inputs' shapes, and what inputs of the same sizes in another class show: the entry
    proven on square inputs, else (square, or d_v = d_k) that it is right there, or the stage that deviates."""
    error: StudentError | None = None
    right_elsewhere: float = 0.0     # the check's credit when it runs and is right on the other class's inputs

    def questions(self):
        groups = []
        for other in [square_input(self.args)] + [o for _, o in _other_shapes(*self.args)]:
            if other is not None:
                groups += [[other]] + follow_ups(self.function, other, None)
        return [[question(self.function, a) for a in group] for group in groups]

    def resolve(self, probe) -> Outcome:
        exc, name = self.error, self.function
        message = f"{str(exc).rstrip('.')}. {expected_shapes(*self.args)}"
        entry = diagnose_square(name, self.args, probe)
        if entry is not None:
            return Outcome(False, f"{message} On square inputs (n_q = n_k), where it runs: {entry.sentence}", entry.id)
        for said, other in _other_shapes(*self.args):
            pair = probe([other])[0]
            if isinstance(pair, StudentError):
                continue
            if right(REFERENCE[name], pair, *other):
                return Outcome(False, f"{message} It runs and is right {said}: it must work for any sizes.",
                               credit=self.right_elsewhere)
            told = Pending(name, other, pair, "").resolve(probe)
            if told.diagnosis or told.stage:
                return Outcome(False, f"{message} {said[0].upper()}{said[1:]}, where it runs:{told.message}",
                               told.diagnosis, stage=told.stage)
            return Outcome(False, f"{message} It runs {said}, but its answer there is wrong too.")
        return Outcome(False, message, exc.diagnosis)


def _other_shapes(Q, K, V):
    """Inputs of the same sizes in another class: square (n_k = n_q), and with d_v = d_k."""
    if len(K) != len(Q):
        rows = np.resize(np.arange(len(K)), len(Q))
        yield "with as many keys as queries (n_k = n_q)", (Q, K[rows], V[rows])
    if V.shape[1] != K.shape[1]:
        cols = np.resize(np.arange(V.shape[1]), K.shape[1])
        yield "with d_v = d_k", (Q, K, V[:, cols])


def right(reference, pair, Q, K, V) -> bool:
    want_out, want_w = reference(Q, K, V)
    return close(pair[1], want_w) and close(pair[0], want_out)


# --- the shapes ------------------------------------------------------------------------------------

def shapes_check(name: str, draw=case) -> Check:
    """The shapes on the check's inputs, then with a size of 1 in each dimension in turn."""
    def plan(rng):
        first = draw(rng)
        ones = size_one_cases(rng)
        asked = [Question(name, first)] + [Question(name, args, draws="size-one") for _, args in ones]
        return Plan(asked, first=first, ones=ones)
    return Check("shapes", plan, lambda plan, got: _shapes(name, plan, got))


def _shapes(name, plan, got):
    Q, K, V = plan.first
    out, w = pair_of(name, got[0], plan.first)
    want_out, want_w = (Q.shape[0], V.shape[1]), (Q.shape[0], K.shape[0])
    if out.shape != want_out or w.shape != want_w:
        return mismatch(name, (Q, K, V), (out, w),
                        f"With Q {Q.shape}, K {K.shape}, V {V.shape} the output should be (n_q, d_v) = "
                        f"{want_out} and the weights (n_q, n_k) = {want_w}; got {out.shape} and {w.shape}.")
    for (dim, (Q1, K1, V1)), reply in zip(plan.ones, got[1:]):
        out, w = pair_of(name, reply, (Q1, K1, V1))
        want_out, want_w = (Q1.shape[0], V1.shape[1]), (Q1.shape[0], K1.shape[0])
        if out.shape != want_out or w.shape != want_w:
            return fail(f"With {ONE[dim]}, Q {Q1.shape}, K {K1.shape} and V {V1.shape}, the output should be "
                        f"(n_q, d_v) = {want_out} and the weights (n_q, n_k) = {want_w}; got {out.shape} and "
                        f"{w.shape}{_squeezed(out.shape, want_out, w.shape, want_w)}. A size of 1 is still an axis: "
                        "keep every axis whatever its length.")
    return ok()


def _squeezed(*shapes) -> str:
    got = shapes[0::2]
    want = shapes[1::2]
    if all(g == tuple(d for d in w if d != 1) for g, w in zip(got, want)):
        return " (the axes of length 1 are dropped, as np.squeeze drops them)"
    return ""


# --- the values ------------------------------------------------------------------------------------

SAID = {"ties": "with ties: a query of zeros and two equal keys", "integer": "with integer inputs",
        "float32": "with float32 inputs", "float16": "with float16 inputs",
        "same-id": "with new values in the very arrays of an earlier call (the same id())",
        "large": "with scores in the thousands"}
OWN_STABILITY = ("scaled_dot_product_attention",)      # a function whose cell has a stability check of its own


def matches_check(check: str, name: str, draw=case, *, square: bool = False) -> Check:
    """Weights and output equal the engine's: on the check's inputs, with one argument changed at a time
    and on the first inputs again (state, ``_state.py``), at a second width d_k, with a size of 1 in each
    dimension (where the shapes are right: with a shapes check, wrong shapes are its to charge), at fresh,
    larger sizes and on the coverage table's cases (``coverage.py``); the inputs are left as they were."""
    def plan(rng):
        first = draw(rng)
        varied = [Varied(args, REFERENCE[name](*args), said, new, alone)
                  for args, said, new, alone in _varied(rng, *first)]
        more = list(_more_cases(rng, first, square))
        props = coverage.CASES + (() if name in OWN_STABILITY else ("large",))
        covered = coverage.cases(name, first, rng, props)
        evidence = attention_evidence(name, rng, square=square)
        asked = (repeat_questions(name, first, [v.args for v in varied])
                 + [Question(name, args, draws=d) for args, _, d in more] + covered + list(evidence.questions))
        return Plan(asked, first=first, varied=varied, more=more, covered=covered, evidence=evidence, square=square)
    return Check(check, plan, lambda plan, got: _matches(name, plan, got))


def _matches(name, plan, got):
    first, varied, reference = plan.first, plan.varied, REFERENCE[name]
    convert = lambda raw: to_pair(raw, name)                    # noqa: E731
    trips = len(varied) + 2
    try:
        r = repeat(name, convert, got[:trips], first, [v.args for v in varied])
    except StudentError as exc:
        raise restated(name, exc, first, credit=HALF) from None
    problem = state_problem(name, r, reference(*first), varied, ("output", "weights"))
    if problem:
        return (_nan(name, first, r.first) or _dropout(name, first, [r.first, r.again])
                or _not_computing(name, plan, got, r.first) or _stateful(name, problem, r.first[1]))
    answers = [(first, r.first, True, None)] + [(v.args, a, True, None) for v, a in zip(varied, r.varied)]
    answers += [(args, pair_of(name, g, args, credit=HALF), strict, None)
                for (args, strict, _), g in zip(plan.more, got[trips:])]
    wrong = _first_wrong(name, plan, got, answers, first)
    if wrong:
        return credited(wrong, _one_part_right(name, answers))
    problem = mutation_problem(name, r.changed)          # before the coverage cases: it may be why they fail
    if problem:
        return credited(fail(problem), HALF)
    at = trips + len(plan.more)
    covered = [(q.args, pair_of(name, g, q.args, SAID.get(q.draws), credit=HALF), True, q.draws)
               for q, g in zip(plan.covered, got[at:]) if q.draws]
    wrong = _same_id(name, plan, got[at:]) or _first_wrong(name, plan, got, covered, first)
    return credited(wrong, HALF) if wrong else ok()


HALF = 0.5      # the value check's credit for one evidenced part: right on every ordinary input but the table's
                # cases, one of weights and output right everywhere, or right where n_q = n_k only (``Restated``)


def _one_part_right(name, answers) -> float:
    """``HALF`` when one of the two parts (the weights, the output) is right on every ordinary input, else 0."""
    right = [[], []]
    for args, (out, w), strict, _ in answers:
        want_out, want_w = REFERENCE[name](*as_float64(args))
        if strict or (out.shape, w.shape) == (want_out.shape, want_w.shape):
            right[0].append(close(out, want_out))
            right[1].append(close(w, want_w))
    return HALF if all(right[0]) != all(right[1]) or swapped_right(REFERENCE[name], answers) else 0.0


def _dropout(name, first, pairs):
    said = dropout_left_on(name, REFERENCE[name], first, pairs)
    return credited(said, HALF) if said is not None else None


def _same_id(name, plan, got):
    """New values written into the very arrays of the previous call gave that call's answer: cached on id()."""
    for k, q in enumerate(plan.covered):
        if q.draws != "same-id" or k == 0 or got[k].error or got[k - 1].error:
            continue
        pair, before = to_pair(got[k].value, name), to_pair(got[k - 1].value, name)
        fresh = REFERENCE[name](*q.args)
        if same_values(pair, before) and not same_values(fresh, REFERENCE[name](*plan.covered[k - 1].args)):
            return stateful(f"`{name}` returned, for new values written into the very arrays of its previous call "
                            "(the same objects, so the same id()), that call's answer: its result does not follow the "
                            "values. Is it cached on id(Q), id(K) or id(V)? An id is reused once an array is freed; "
                            "compute the result from the values on every call.", student_weights=plot(pair[1]))
    return None


def _first_wrong(name, plan, got, answers, first):
    """The failure for the first answer that is not the engine's (its weights or its output), else None."""
    if _all_right(name, answers):
        return None
    for args, (out, w), strict, drawn in answers:
        want_out, want_w = REFERENCE[name](*as_float64(args))
        out, w = (half(out), half(w)) if drawn == "float16" else (out, w)
        if not strict and (out.shape, w.shape) != (want_out.shape, want_w.shape):
            continue                                     # a size-1 shape: the shapes check's to charge
        if not (close(w, want_w) and close(out, want_out)):
            return _wrong(name, plan, got, args, (out, w), args is first, drawn)
    return None


def _all_right(name, answers) -> bool:
    """Every answer the engine's, compared at once (``all_close``); False when one is not, or a reference raised
    (``_first_wrong`` then reads them one by one, as it always says the first that is wrong)."""
    pairs = []
    try:
        for args, (out, w), strict, drawn in answers:
            want_out, want_w = REFERENCE[name](*as_float64(args))
            out, w = (half(out), half(w)) if drawn == "float16" else (out, w)
            if strict or (out.shape, w.shape) == (want_out.shape, want_w.shape):
                pairs += [(w, want_w), (out, want_out)]
    except Exception:  # noqa: BLE001 - the one-by-one reading meets it where it always did
        return False
    return all_close(pairs)


def _stateful(name, problem, weights):
    if not isinstance(problem, AskAlone):
        return stateful(problem, student_weights=plot(weights))
    return FollowUp(name, [[problem.args]], lambda probe: stateful(
        problem.said(answer(probe([problem.args])[0])), student_weights=plot(weights)))


def _varied(rng, Q, K, V):
    """The state probe's inputs: (args, how said, the new arguments, stale_only); each argument new alone too,
    so a cache keyed on any subset of Q, K and V returns an earlier answer for one of them."""
    K2, V2 = normal(rng, *K.shape), normal(rng, *V.shape)
    yield (Q, K2, V2), "the same Q with new K and V", ("K", "V"), False
    yield (normal(rng, *Q.shape), K, V), "the same K and V with a new Q", ("Q",), False
    yield (Q, K2, V), "the same Q and V with a new K", ("K",), True
    yield (Q, K, V2), "the same Q and K with a new V", ("V",), True


def _more_cases(rng, first: tuple, square: bool):
    """(args, strict, the property drawn) beyond the state probe: a second width, each size of 1, fresh larger
    sizes. ``strict`` is False where a wrong shape is the shapes check's (size 1 in a function that has one)."""
    Q, K, V = first
    d_k = int(rng.choice([d for d in range(2, 10) if d not in (Q.shape[1], V.shape[1])]))
    yield (normal(rng, len(Q), d_k), normal(rng, len(K), d_k), V), True, None
    for _, args in size_one_cases(rng, square=square):
        yield args, square, "size-one"
    yield fresh_case(rng, square=square), True, None if square else "rectangular"


def _not_computing(name, plan, got, pair):
    """The value check's "computes nothing" failure, when neither part is shown computed (``_evidence``)."""
    said = evidence_unproven(name, plan.evidence, got, part=1)
    if said and evidence_unproven(name, plan.evidence, got, part=0):
        return nothing_computed(name, said, "the values", pair)
    return None


def evidence_unproven(name: str, ev, got: list, part: int):
    """What the evidence questions (the last of ``got``) showed instead of computing ``part`` of the answer (1 the
    weights, 0 the output), or None."""
    got = got[-len(ev.questions):]
    return unproven(ev, got, lambda reply: pair_of(name, reply, reply_args(ev, got, reply)), REFERENCE[name], part)


def reply_args(ev, got: list, reply) -> tuple:
    """The inputs ``reply`` answered (to restate an exception with their shapes)."""
    return next((q.args for q, r in zip(ev.questions, got) if r is reply), ev.case)


def _wrong(name, plan, got, args, pair, first, drawn=None):
    """A value mismatch: said as "computes nothing" when the function is not shown to compute (``_evidence``),
    else as the comparison that failed (on which of the coverage table's cases, ``drawn``), with the
    misconception or stage it shows."""
    out, w = pair
    want_out, want_w = REFERENCE[name](*as_float64(args))
    nan = _nan(name, args, pair, f" {SAID[drawn]}" if drawn in SAID else "")   # NaN first: it equals itself always
    if nan:
        return nan
    nothing = _not_computing(name, plan, got, pair)
    if nothing:
        return nothing
    what = "weights differ" if not close(w, want_w) else "output differs"
    shapes = ", ".join(f"{a} {x.shape}" for a, x in zip("QKV", args))
    shown = "" if first else f" ({SAID[drawn]}: {shapes})" if drawn in SAID else f" (with {shapes})"
    return mismatch(name, as_float64(args), pair, f"The {what} from the expected values{shown}.",
                    student_weights=plot(w), expected_weights=want_w)


def half(a):
    """An answer to float16 inputs, compared as float16 can hold it (its scores were float16 once)."""
    return np.asarray(a).view(HalfPrecision)


def plot(w):
    return w if w.ndim == 2 else []


def nothing_computed(name: str, observed, judged: str, pair, part: int = 1) -> Outcome:
    """The failure of a check whose function is not shown to compute ``part`` of its answer (``observed``: an
    ``_evidence.Unproven``): its stage is the stage that should compute it (the scores for the weights, the
    output), or the state when its answers change between identical calls."""
    if observed.random:
        what, stage = "its results from Q, K and V alone (random numbers, or state kept between calls)", "state"
    else:
        what, stage = ("its output from Q, K and V", "its weights from Q and K")[part], ("output", "scores")[part]
    return Outcome(False, f"`{name}` {observed.said}: it does not compute {what}, so this check ({judged}) earns "
                   "nothing. Compute the weights as softmax(Q K^T / sqrt(d_k)) and the output as weights @ V.",
                   details=listified(student_weights=plot(pair[1])), stage=stage)


def _nan(name, case, pair, context: str = ""):
    return nan_first(name, as_float64(case), pair, {"weights": pair[1], "output": pair[0]}, context)
