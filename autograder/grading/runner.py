"""Checks run as data: every question of a grade cell's checks asked in one batch per function, then the
diagnoses' questions in one more batch per function, at most.

1. Each check declares its questions (``Check.ask`` -> ``Plan``); none has been asked yet.
2. The questions of one function, every check's in the rubric's order (each check's together, as it declared
   them), go to the student in one batch (``asking.ask``: one round trip for a sandboxed student).
3. Each check judges its own replies: an ``Outcome``, or a ``Pending`` whose message depends on a diagnosis.
4. The questions that depend on those answers (``Later.questions``: a diagnosis's, declared by
   ``misconceptions.follow_ups``, or a check's own ``FollowUp``) go in one more batch per function, and each
   reads its answers from them (``FollowUps``); a question asked that was not declared is asked at once, and
   counted (``extra_rounds``: a test holds it at 0 on the corpus).

A check never raises: a StudentError is its failure, anything else an internal error for an instructor.
"""
from __future__ import annotations

import traceback

from dataclasses import dataclass
from typing import Callable

from ..records import INTERNAL
from .asking import Question, ask
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
    replies = _asked(student, plans)
    outcomes = [_judged(check, plan, got) for (check, _), plan, got in zip(checks, plans, replies)]
    return _resolved(student, outcomes)


def _internal() -> Outcome:
    return Outcome(False, INTERNAL, details={"internal_error": traceback.format_exc(limit=3)})


def _planned(check, rng):
    try:
        return check.ask(rng)
    except Exception:  # noqa: BLE001 - a grader bug must not cost the student or stop the batch
        return _internal()


def _asked(student, plans: list) -> list[list]:
    """Each plan's replies, aligned with its questions: one ``ask`` per function, its questions in plan order."""
    batches: dict[str, list[tuple[int, int]]] = {}
    for i, plan in enumerate(plans):
        for j, q in enumerate(plan.questions if isinstance(plan, Plan) else ()):
            batches.setdefault(q.function, []).append((i, j))
    out = [[None] * len(p.questions) if isinstance(p, Plan) else [] for p in plans]
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
    except StudentError as exc:
        return _failed(exc)
    except Exception:  # noqa: BLE001 - a grader bug must not cost the student or stop the batch
        return _internal()


def _failed(exc: StudentError) -> Outcome:
    return Outcome(False, str(exc), diagnosis=exc.diagnosis, stage=exc.stage)


def _resolved(student, outcomes: list) -> list[Outcome]:
    pending = {k: o for k, o in enumerate(outcomes) if isinstance(o, Later)}
    if not pending:
        return outcomes
    store = FollowUps(student)
    wanted: dict[str, list[list[Question]]] = {}
    for p in pending.values():
        try:
            wanted.setdefault(p.function, []).extend(p.questions())
        except Exception:  # noqa: BLE001 - its questions are then asked as the diagnosis reaches them
            pass
    store.ask_all(wanted)
    out = list(outcomes)
    for k, p in pending.items():
        try:
            out[k] = p.resolve(Probe(student, p.function, store.source(p.function)))
        except StudentError as exc:
            out[k] = _failed(exc)
        except Exception:  # noqa: BLE001 - a grader bug must not cost the student or stop the batch
            out[k] = _internal()
        else:
            out[k].credit = max(out[k].credit, p.credit)
    return out


class FollowUps:
    """The replies to the diagnoses' questions, asked in one batch per function, looked up by what was asked:
    a group as it was declared (a sequence of calls keeps its order), else each question by its content."""

    def __init__(self, student):
        self.student = student
        self.groups: dict[tuple, list] = {}
        self.single: dict[tuple, object] = {}
        self.extra = 0                   # requests not declared: asked at once, one round trip each

    def ask_all(self, wanted: dict[str, list[list[Question]]]) -> None:
        for function, groups in wanted.items():
            unique = list({tuple(q.key() for q in g): g for g in groups}.items())
            flat = [q for _, g in unique for q in g]
            replies = iter(ask(self.student, function, flat))
            for key, g in unique:
                self._keep(key, g, [next(replies) for _ in g])

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
