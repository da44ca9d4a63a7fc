"""Checks run as data: every question of a grade cell's checks asked in one batch per function, then the
diagnoses' questions in one more batch per function, at most.

1. Each check declares its questions (``Check.ask`` -> ``Plan``); none has been asked yet.
2. The questions of one function, every check's in the rubric's order (each check's together, as it declared
   them), go to the student in one batch (``asking.ask``: one round trip for a sandboxed student).
   A property check's evidence past its first call (``Held``: asked again, the relations' inputs) is held back:
   it is read only when the first answer is not the engine's (``_evidence.unproven``), so right code is never
   asked it.
3. Each check judges its own replies: an ``Outcome``, or a ``Pending`` whose message depends on a diagnosis. A
   judge that reaches held evidence takes it as shown for now and marks it wanted.
4. The questions that depend on those answers (``Later.questions``: a diagnosis's, declared by
   ``misconceptions.follow_ups``, or a check's own ``FollowUp``) and the held evidence that was wanted go in one
   more batch per function; the checks that wanted evidence judge again with it, and each diagnosis reads its
   answers from that batch (``FollowUps``); a question asked that was not declared is asked at once, and
   counted (``extra_rounds``: a test holds it at 0 on the corpus; tests/grading/test_held_evidence.py holds each
   verdict to the one with every question asked up front).

A check never raises: a StudentError is its failure, anything else an internal error for an instructor.
"""
from __future__ import annotations

import traceback

from dataclasses import dataclass
from typing import Callable

from ..records import INTERNAL
from .asking import NotAskedYet, NotYet, Question, ask
from .student import StudentError
from .verdicts import Deferred, Later, Outcome, Plan, Probe


@dataclass(frozen=True)
class Check:
    """One rubric check: ``ask(rng) -> Plan`` and ``judge(plan, replies) -> Outcome | Pending``."""
    name: str
    ask: Callable
    judge: Callable

    @property
    def __name__(self) -> str:
        return self.name

    def __call__(self, student, rng) -> Outcome:
        """The check on its own: its questions in one batch per function (``runner.run_checks``)."""
        return run_checks(student, [(self, rng)])[0]


def run_checks(student, checks: list[tuple]) -> list[Outcome]:
    """The outcome of each (check, rng), in order; ``student`` answers ``ask`` (see ``asking.ask``)."""
    plans = [_planned(check, rng) for check, rng in checks]
    held = [Held(plan) for plan in plans]
    replies = _asked(student, plans, held)
    outcomes = [_judged(check, plan, got) for (check, _), plan, got in zip(checks, plans, replies)]
    return _resolved(student, [check for check, _ in checks], plans, replies, held, outcomes)


class Held:
    """The questions of a check's plan that wait for the next batch (``at``: the evidence beyond its first call,
    ``_evidence.py``), and whether a judge read one of them (``needed``: then they are asked with the diagnoses'
    questions, and the check judged again)."""

    def __init__(self, plan):
        ev = getattr(plan, "evidence", None) if isinstance(plan, Plan) else None
        rest = {id(q) for q in getattr(ev, "questions", ())[1:]}
        self.at = [j for j, q in enumerate(plan.questions) if id(q) in rest] if rest else []
        self.needed = False


def _internal() -> Outcome:
    return Outcome(False, INTERNAL, details={"internal_error": traceback.format_exc(limit=3)})


def _planned(check, rng):
    try:
        return check.ask(rng)
    except Exception:  # noqa: BLE001 - a grader bug must not cost the student or stop the batch
        return _internal()


def _asked(student, plans: list, held: list) -> list[list]:
    """Each plan's replies, aligned with its questions: one ``ask`` per function, its questions in plan order
    (those ``held`` for the next batch have a ``NotYet`` in their place)."""
    batches: dict[str, list[tuple[int, int]]] = {}
    out = [[None] * len(p.questions) if isinstance(p, Plan) else [] for p in plans]
    for i, plan in enumerate(plans):
        later = set(held[i].at)
        for j, q in enumerate(plan.questions if isinstance(plan, Plan) else ()):
            if j in later:
                out[i][j] = NotYet(held=held[i])
            else:
                batches.setdefault(q.function, []).append((i, j))
    for function, where in batches.items():
        at = {place: k for k, place in enumerate(where)}
        questions = [_placed(plans[i].questions[j], i, j, at) for i, j in where]
        for (i, j), reply in zip(where, ask(student, function, questions)):
            out[i][j] = reply
    return out


def _placed(q: Question, plan: int, j: int, at: dict) -> Question:
    """The question with ``into`` (an index in its plan, or counted back from it when negative) as an index in
    the batch (None when not in it)."""
    if q.into is None:
        return q
    target = j + q.into if q.into < 0 else q.into
    return Question(q.function, q.args, q.kwargs, q.echo, at.get((plan, target)), q.draws, q.hold)


def _judged(check, plan, got):
    if isinstance(plan, Outcome):
        return plan
    try:
        return check.judge(plan, got)
    except Deferred as exc:
        return exc.pending
    except NotAskedYet:                  # judged again once the held questions are asked (``_resolved``)
        return Outcome(False, INTERNAL)
    except StudentError as exc:
        return _failed(exc)
    except Exception:  # noqa: BLE001 - a grader bug must not cost the student or stop the batch
        return _internal()


def _failed(exc: StudentError) -> Outcome:
    return Outcome(False, str(exc), diagnosis=exc.diagnosis, stage=exc.stage)


def _resolved(student, checks: list, plans: list, replies: list, held: list, outcomes: list) -> list[Outcome]:
    """The second batch: the held questions a judge read and the diagnoses' questions, one ``ask`` per function;
    the checks that read held questions judged again with their answers, then every diagnosis resolved."""
    again = [k for k, h in enumerate(held) if h.needed]
    pending = {k: o for k, o in enumerate(outcomes) if isinstance(o, Later)}
    if not pending and not again:
        return outcomes
    store = FollowUps(student)
    rest = [(k, j) for k in again for j in held[k].at]
    answers = store.ask_all(_wanted(pending.values()), [plans[k].questions[j] for k, j in rest])
    for (k, j), reply in zip(rest, answers):
        replies[k][j] = reply
    out = list(outcomes)
    for k in again:
        out[k] = _judged(checks[k], plans[k], replies[k])
        pending.pop(k, None)
        if isinstance(out[k], Later):
            pending[k] = out[k]
    for k, p in pending.items():
        out[k] = _resolve(student, store, p)
    return out


def _wanted(pending) -> dict[str, list[list[Question]]]:
    wanted: dict[str, list[list[Question]]] = {}
    for p in pending:
        try:
            wanted.setdefault(p.function, []).extend(p.questions())
        except Exception:  # noqa: BLE001 - its questions are then asked as the diagnosis reaches them
            pass
    return wanted


def _resolve(student, store, p: Later) -> Outcome:
    try:
        out = p.resolve(Probe(student, p.function, store.source(p.function)))
    except StudentError as exc:
        return _failed(exc)
    except Exception:  # noqa: BLE001 - a grader bug must not cost the student or stop the batch
        return _internal()
    out.credit = max(out.credit, p.credit)
    return out


class FollowUps:
    """The replies to the diagnoses' questions, asked in one batch per function, looked up by what was asked:
    a group as it was declared (a sequence of calls keeps its order), else each question by its content."""

    def __init__(self, student):
        self.student = student
        self.groups: dict[tuple, list] = {}
        self.single: dict[tuple, object] = {}
        self.extra = 0                   # requests not declared: asked at once, one round trip each

    def ask_all(self, wanted: dict[str, list[list[Question]]], held: list[Question] = ()) -> list:
        """Each group ``wanted`` once, after the ``held`` questions of the same function, in one ``ask`` per
        function; the replies to ``held``, in order."""
        first: dict[str, list[int]] = {}
        for k, q in enumerate(held):
            first.setdefault(q.function, []).append(k)
        out = [None] * len(held)
        for function in {**first, **wanted}:
            unique = list({tuple(q.key() for q in g): g for g in wanted.get(function, [])}.items())
            asked = [held[k] for k in first.get(function, [])]
            replies = iter(ask(self.student, function, asked + [q for _, g in unique for q in g]))
            for k in first.get(function, []):
                out[k] = next(replies)
            for key, g in unique:
                self._keep(key, g, [next(replies) for _ in g])
        return out

    def _keep(self, key: tuple, group: list[Question], replies: list) -> None:
        self.groups[key] = replies
        for q, r in zip(group, replies):
            self.single.setdefault(q.key(), r)

    def source(self, function: str):
        """``questions -> replies`` for a Probe of ``function``: from the batch, the rest asked at once."""
        def replies(questions: list[Question]) -> list:
            key = tuple(q.key() for q in questions)
            if key in self.groups:
                return self.groups[key]
            missing = [q for q in questions if q.key() not in self.single]
            if missing:
                self.extra += 1
                self.student.extra_rounds = getattr(self.student, "extra_rounds", 0) + 1
                self._keep(tuple(q.key() for q in missing), missing, ask(self.student, function, missing))
            return [self.single[q.key()] for q in questions]
        return replies
