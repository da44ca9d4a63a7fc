"""ex3_memory and ex3_crossover: exact byte counts and the crossover length."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import solutions as S

from ..asking import Question
from ..student import StudentError, as_returned, to_int
from ...misconceptions import entries_for
from ._base import Check, Deferred, Later, Outcome, Pending, Plan, credited, fail, mismatch, ok
from ._counts import number, slip_and_stage

DTYPES = {1: np.int8, 2: np.float16, 4: np.float32, 8: np.float64}


def _as_int(name, args, value, slip: str | None = None, stage: str | None = None) -> int:
    """The exact int; a non-integer answer is still explained (a unit slip, e.g. KiB, found across the
    check's answers, else a proven catalogue entry, e.g. GB instead of bytes, or the stage that deviates)."""
    try:
        return to_int(value, f"{name}{args}")
    except StudentError as exc:
        if slip:
            raise StudentError(slip, stage=stage) from None
        raise Deferred(mismatch(name, args, value, f"{exc}.", otherwise=str(exc))) from None


# an argument at least this large draws the coverage table's "large" (a count beyond int32, exact past float32)
LARGE = {"attention_memory_bytes": 2**20, "ffn_memory_bytes": 2**20, "crossover_length": 2**16}
PRIMER = {"attention_memory_bytes": (8,), "ffn_memory_bytes": (8, 8), "crossover_length": (8, 8)}


def _exact_plan(name, cases, defaults=()) -> Plan:
    """Every case, the first again (call order), then the ``defaults`` cases (the function called with its default
    arguments) right after a call whose arguments are not the defaults (a primer, not judged): a default kept
    from an earlier call shows there."""
    head = [Question(name, tuple(args), draws="large" if max(args) >= LARGE[name] else None) for args in cases]
    primer = (*defaults[0], *PRIMER[name]) if defaults else None
    tail = [Question(name, primer)] if primer else []
    tail += [Question(name, tuple(args), draws="defaults-after") for args in defaults]
    return Plan(head + [Question(name, tuple(cases[0]), draws="call-order")] + tail, name=name, cases=cases,
                defaults=list(defaults))


def _attention_exact_plan(rng) -> Plan:
    """The count for fp16 (the default dtype_bytes=2) is exactly n * n * 2, for small and huge n: this check owns
    the dependence on n and the unit; how the count follows dtype_bytes is the next one's."""
    ns = [1, 3, 256, 1000, 2**20, 2**20 + 7, 3 * 2**22, int(rng.integers(2, 10**6))]
    return _exact_plan("attention_memory_bytes", [(n, 2) for n in ns], [(n,) for n in ns[2:5]])


def _measured_plan(rng) -> Plan:
    n = int(rng.integers(2, 300))
    n2 = n + int(rng.integers(1, 300))
    asked = [(n, 2), (n2, 2)] + [(n, b) for b in DTYPES]
    return Plan([Question("attention_memory_bytes", args) for args in asked], n=n, n2=n2)


def _measured(plan, got):
    """The count follows dtype_bytes as numpy's .nbytes does: for each dtype it is the fp16 count times
    itemsize / 2 (exactly .nbytes when the fp16 count is right). The unit and the dependence on n are the
    exact check's to charge (a count in GB follows dtype_bytes too); a count of 0, or one that does not change
    with n (dtype_bytes handed back), follows nothing."""
    n, n2 = plan.n, plan.n2
    raw16 = got[0].get()
    fp16 = _count(n, 2, raw16)
    if fp16 == 0:
        return fail(f"attention_memory_bytes({n}, 2) = {as_returned(raw16)}: a ({n}, {n}) float16 array takes "
                    f"{np.empty((n, n), np.float16).nbytes} bytes; a count of 0 shows nothing of `dtype_bytes`, so this "
                    "check (following dtype_bytes) has no evidence and earns nothing (is the count rounded, or in a "
                    "unit larger than bytes?).")
    raw_n2 = got[1].get()
    if _count(n2, 2, raw_n2) == fp16:
        return fail(f"attention_memory_bytes({n}, 2) and attention_memory_bytes({n2}, 2) are both {as_returned(raw16)}: "
                    "the count as returned is the same for both (a constant, or a count rounded so coarsely that "
                    "n does not show), so this check (following dtype_bytes) has no evidence and earns "
                    "nothing. Count the bytes of an n x n matrix: n * n * dtype_bytes.")
    for (b, dtype), reply in zip(DTYPES.items(), got[2:]):
        raw = reply.get()
        if not _proportional(_count(n, b, raw) * 2, fp16 * b):
            measured = np.empty((n, n), dtype=dtype).nbytes
            return mismatch("attention_memory_bytes", (n, b), raw,
                            f"attention_memory_bytes({n}, {b}) = {as_returned(raw)} and attention_memory_bytes({n}, 2) "
                            f"= {as_returned(raw16)}, but a ({n}, {n}) array of {np.dtype(dtype).name} takes "
                            f"{measured} bytes (its .nbytes): {b} byte(s) per value against float16's 2, and the count "
                            "should follow dtype_bytes the same way.")
    return ok()


def _count(n, b, raw):
    """One number (a float is the exact check's to charge); anything else is explained as the exact check does."""
    value = number(raw)
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return _as_int("attention_memory_bytes", (n, b), raw)
    return value                            # an int may be beyond int64 (numpy cannot test it)


def _proportional(a, b) -> bool:
    return a == b or abs(a - b) * 10**9 <= max(abs(a), abs(b))      # exact for ints of any size


def _ffn_plan(rng) -> Plan:
    pairs = ((1, 4), (2, 1), (4, 8), (8, 4))                 # (dtype_bytes, expansion): each value varies
    cases = [(n, d, b, e) for n in (1, 512, 2**20 + 3, int(rng.integers(2, 10**5)))
             for d in (64, 4096, int(rng.integers(100, 9000))) for b, e in pairs]
    return _exact_plan("ffn_memory_bytes", cases, [(n, d) for n, d, *_ in cases[::7]])


def _crossover_plan(rng) -> Plan:
    cases = [(d, b, e) for d in (64, 768, 8192, 65536, int(rng.integers(100, 20000)))
             for b, e in ((2, 2), (4, 8))]
    cases.insert(0, (4096, 2, 4))
    return _exact_plan("crossover_length", cases, [(d,) for d, _, _ in cases[1::2]])


def _exact(plan, got):
    """Every case exactly; the first case is asked again at the end and must give the same answer. Then the
    ``defaults`` cases (the same function called with its default arguments) give the engine's counts. A case
    whose call failed (or whose answer the grader refuses, an int beyond int64) fails the check where it is
    reached: a wrong count before it is said first."""
    name, cases = plan.name, plan.cases
    *answers, again = [r.get() if r.error is None else r.error for r in got[:len(cases) + 1]]
    for raw in (answers[0], again):
        if isinstance(raw, StudentError):
            raise raw
    if not _same_answer(again, answers[0]):
        return fail(f"{name}{cases[0]} = {as_returned(answers[0])} the first time and {as_returned(again)} when called again "
                    "with the same arguments: its result changes between identical calls. Compute the count "
                    "from the arguments alone.")
    reference = REFERENCES[name]
    exact = [reference(*args) for args in cases]
    stage, slip = slip_and_stage(name, cases, answers, exact) or (None, None)
    credit = _partly_right(name, cases, answers, exact)
    for args, raw, want in zip(cases, answers, exact):
        if isinstance(raw, StudentError):
            raise raw
        if _as_int(name, args, raw, slip, stage) != want:
            if slip:
                return Outcome(False, slip, stage=stage, credit=credit)
            wrong = mismatch(name, args, raw, f"{name}{args} = {as_returned(raw)}; {EXPECTED[name]}")
            return ZeroCrossover(wrong) if _always_zero(name, answers) else credited(wrong, credit)
    return credited(_defaults(name, reference, plan.defaults, got[len(cases) + 2:]), HALF)


def _always_zero(name: str, answers) -> bool:
    """A crossover of 0 whatever the arguments: what a stub returns, and what the catalogue's search from n = 0
    returns (``crossover-from-zero``)."""
    return name == "crossover_length" and all(number(raw) == 0 for raw in answers)


@dataclass
class ZeroCrossover(Later):
    """A crossover of 0 everywhere names its family (``crossover-from-zero``) only when the notebook's
    attention_memory_bytes is shown to count (exact on two cases): then it is a search that stops at once, in code
    that computes (its answers, 0 wherever asked, are the family's every answer: no follow-up is asked, so the
    cell keeps to two batches for its one function). Next to counts that compute nothing it is what do-nothing code returns, and it is said as seen."""
    pending: Pending
    function: str = "attention_memory_bytes"
    CASES = ((3, 2), (100, 4))

    def questions(self) -> list[list[Question]]:
        return [[Question(self.function, args) for args in self.CASES]]

    def resolve(self, probe) -> Outcome:
        got = probe(list(self.CASES))
        counts = all(not isinstance(v, StudentError) and number(v) == S.attention_memory_bytes(*args)
                     for args, v in zip(self.CASES, got))
        if counts:             # 0 at every argument asked is the family's every answer: nothing more to ask
            entry = next(e for e in entries_for("crossover_length") if e.id == "crossover-from-zero")
            return Outcome(False, f"{self.pending.message} {entry.sentence}", diagnosis=entry.id,
                           details=self.pending.details)
        return Outcome(False, f"{self.pending.message} It is 0 whatever the arguments, and `attention_memory_bytes` "
                       "is not shown to count bytes either.")


HALF = 0.5      # a count right on every case but some: its defaults, or only the counts beyond 2**31 (overflow), or
                # a crossover one off everywhere


def _partly_right(name, cases, answers, exact) -> float:
    """``HALF`` when every wrong count is beyond what int32 holds (the rest exact), or every crossover is one off."""
    values = [number(raw) for raw in answers]
    if any(v is None for v in values):
        return 0.0
    wrong = [(v, w) for v, w in zip(values, exact) if v != w]
    if name == "crossover_length":
        return HALF if wrong and all(abs(v - w) == 1 for v, w in wrong) else 0.0
    return HALF if wrong and all(w > 2**31 - 1 for _, w in wrong) else 0.0


def _defaults(name, reference, defaults, got):
    """Called with its default arguments, the function counts as the exercise's defaults say (fp16, and an
    expansion of 4): every call that names them was right, so a wrong count here is a wrong default (``_exact``
    gives it ``HALF``)."""
    for args, reply in zip(defaults, got):
        raw = reply.get()
        want = reference(*args)
        if number(raw) != want:
            call_text = f"{name}({', '.join(str(a) for a in args)})"
            return fail(f"{call_text} = {as_returned(raw)}, but called with every argument written out it is right: "
                        f"called without them it should count with the exercise's defaults ({DEFAULTS[name]}), "
                        f"{want:,}{_implied(name, args, raw)}. Give the parameters these defaults in the `def` line.")
    return ok()


DEFAULTS = {"attention_memory_bytes": "dtype_bytes=2", "ffn_memory_bytes": "dtype_bytes=2, expansion=4",
            "crossover_length": "dtype_bytes=2, expansion=4"}


def _implied(name, args, raw) -> str:
    """What the student's default stands for, where one number says it (a dtype_bytes of 4)."""
    value = number(raw)
    if name == "attention_memory_bytes" and isinstance(value, (int, float)) and value > 0:
        per = value / (args[0] * args[0])
        if per == int(per):
            return f"; yours counts {int(per)} byte(s) per value, as if the default were dtype_bytes={int(per)}"
    return ""


def _same_answer(a, b) -> bool:
    """Both the same number (NaN is NaN), or neither a number (what they are is the exact check's to say)."""
    x, y = number(a), number(b)
    if x is None or y is None:
        return x is None and y is None
    return x == y or (x != x and y != y)


EXPECTED = {
    "attention_memory_bytes": "expected the exact number of bytes of an n x n score matrix for these "
                              "arguments (check every factor).",
    "ffn_memory_bytes": "expected the exact number of bytes of the FFN's hidden activations for these "
                        "arguments (check every factor).",
    "crossover_length": "expected the smallest n >= 1 at which the attention matrix takes at least as many "
                        "bytes as the FFN activations.",
}


REFERENCES = {"attention_memory_bytes": S.attention_memory_bytes, "ffn_memory_bytes": S.ffn_memory_bytes,
              "crossover_length": S.crossover_length}

attention_bytes_exact = Check("attention_bytes_exact", _attention_exact_plan, _exact)
attention_bytes_measured = Check("attention_bytes_measured", _measured_plan, _measured)
ffn_bytes_exact = Check("ffn_bytes_exact", _ffn_plan, _exact)
crossover_exact = Check("crossover_exact", _crossover_plan, _exact)
