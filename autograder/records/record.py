"""Result records: typed values built here, totals computed here.

A ``Record`` holds what was graded (the ``CheckResult`` of every check that
ran) and what happened around it (its findings: what needs a person, each one
``Finding``; the student's errors and output). Every total and maximum -- per cell, notebook, category and overall --
is computed from the checks here (the properties below and ``earned``, which
the hidden-test cells' ``grade_cell`` uses too), and every output reads them;
nothing else adds points up.

On disk a record is one JSON file per student (``records.files``).
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, fields
from functools import cached_property
from typing import Any

from ..assignment import CATEGORIES, notebook_of
from .finding import Finding, from_parallel_lists
from .layout import dumps

Points = int | float     # a number of points: a whole number when it is one (``points``)
INTERNAL = "The grader could not run this check (an internal error); an instructor will review it."


@dataclass(frozen=True)
class CheckResult:
    """One rubric check of one grade cell: points earned, the maximum, and what to tell the student."""
    grade_id: str
    check: str
    category: str
    points: Points
    max_points: Points
    passed: bool
    message: str
    diagnosis: str | None = None
    stage: str | None = None          # with no diagnosis: the stage that deviates (misconceptions/localise.py)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def notebook(self) -> str:
        return notebook_of(self.grade_id)

    @property
    def internal_error(self) -> bool:
        return "internal_error" in self.details


@dataclass(frozen=True)
class Score:
    earned: Points
    max: Points


@dataclass(frozen=True)
class CellScore:
    notebook: str
    earned: Points
    max: Points


@dataclass(frozen=True)
class Record:
    """One student's graded submission. Totals are properties of the checks, never stored apart."""
    student_id: str
    checks: tuple[CheckResult, ...]
    assignment: str = ""
    fingerprint: str = ""
    needs_review: bool = False
    findings: tuple[Finding, ...] = ()    # what needs a person, each problem once (``finding.Finding``)
    notes: tuple[str, ...] = ()           # worth telling the student, not a problem (their own errors)
    output: str = ""
    sandbox: dict[str, Any] = field(default_factory=dict)
    grader_error: str = ""
    unwritten: tuple[str, ...] = ()     # files the grading process could not write (the instructor's to see)
    submission: str = ""                  # digest of the submission graded (intake.digest): a resubmission differs
    files: dict[str, str] = field(default_factory=dict)     # notebook -> the file name intake graded it from
    # What a person set in the gradebook (formgrader), read back when the outputs are written, never
    # graded: grade_id -> that cell's score as nbgrader counts it (manual score, extra credit), the
    # grader's comments as (notebook, cell, text), and whether no cell is left to grade by hand.
    manual: dict[str, float] = field(default_factory=dict)
    comments: tuple[tuple[str, str, str], ...] = ()
    reviewed: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "checks", tuple(self.checks))
        object.__setattr__(self, "findings", tuple(self.findings))
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "unwritten", tuple(self.unwritten))
        object.__setattr__(self, "comments", tuple(tuple(c) for c in self.comments))
        internal = any(c.internal_error for c in self.checks)
        object.__setattr__(self, "needs_review", bool(self.needs_review or internal))

    @cached_property
    def total(self) -> float:
        """The points of every cell, a person's score where one was given (nbgrader's raw score)."""
        return points(sum(c.earned for c in self.cells.values()))

    @cached_property
    def auto_total(self) -> Points:
        """The points the grader's checks gave, before any score a person set."""
        return earned(self.checks)

    @cached_property
    def max_total(self) -> Points:
        return points(sum(c.max_points for c in self.checks))

    @cached_property
    def auto_cells(self) -> dict[str, CellScore]:
        """grade_id -> earned (by the checks) and maximum of that cell, in the order the checks ran."""
        sums: dict[str, list[Any]] = {}
        for c in self.checks:                     # summed whole, rounded once: a rounding per check drifted
            cell = sums.setdefault(c.grade_id, [c.notebook, 0.0, 0.0])     # (8 points over weights 2,1,1,1,1: 7.999999)
            cell[1] += c.points
            cell[2] += c.max_points
        return {g: CellScore(nb, points(earned), points(most)) for g, (nb, earned, most) in sums.items()}

    @cached_property
    def cells(self) -> dict[str, CellScore]:
        """grade_id -> earned and maximum of that cell; earned is a person's score where one was set."""
        return {g: CellScore(c.notebook, _number(self.manual[g]), c.max) if g in self.manual else c
                for g, c in self.auto_cells.items()}

    @property
    def manual_cells(self) -> list[str]:
        """The grade cells a person scored."""
        return [g for g in self.cells if g in self.manual]

    @property
    def changed_by_hand(self) -> list[str]:
        """The grade cells a person scored otherwise than the checks did (a confirmed score is not among them)."""
        return [g for g in self.manual_cells if self.cells[g].earned != self.auto_cells[g].earned]

    @property
    def open_review(self) -> bool:
        """Flagged for review and not yet graded by hand in the gradebook."""
        return self.needs_review and not self.reviewed

    @cached_property
    def notebooks(self) -> dict[str, Score]:
        out: dict[str, Score] = {}
        for c in self.cells.values():
            old = out.get(c.notebook, Score(0, 0))
            out[c.notebook] = Score(points(old.earned + c.earned), points(old.max + c.max))
        return out

    @cached_property
    def categories(self) -> dict[str, Score]:
        """Every category of the rubric (0/0 where none of its checks ran)."""
        found = _sum_by(self.checks, lambda c: c.category)
        return {cat: found.get(cat, Score(0, 0)) for cat in (*CATEGORIES, *found)}

    @property
    def integrity(self) -> tuple[str, ...]:
        """Every problem's message, in the order found (the student may read those that accuse nobody)."""
        return tuple(f.message for f in self.findings)

    def review_findings(self, notebook: str) -> list[Finding]:
        """Why the grade cells of ``notebook`` need a person; empty when they do not: the whole submission's
        findings (its folder, a grader failure), then the notebook's own, then a check of it the grader could
        not run."""
        if not self.needs_review:
            return []
        internal = [Finding(INTERNAL, notebook)] if any(c.internal_error and c.notebook == notebook
                                                        for c in self.checks) else []
        return [*(f for f in self.findings if f.notebook == ""),
                *(f for f in self.findings if f.notebook == notebook), *internal]

    def review_reasons(self, notebook: str) -> list[str]:
        """The messages of ``review_findings``: what nbgrader's manual-grading flags and comments say."""
        return [f.message for f in self.review_findings(notebook)]

    def told_student(self, notebook: str | None = None) -> list[str]:
        """The review reasons a student's page may give (of ``notebook``, or the whole submission): none
        that accuses, none once a person has graded the review."""
        if not self.open_review:
            return []
        found = self.review_findings(notebook) if notebook else self.findings
        return [f.message for f in found if not f.accuses]

    @property
    def for_instructor(self) -> list[str]:
        """Every problem once, as the instructor reads it: its private detail (naming the classmate) where it
        has one, in its place."""
        return [f.for_instructor for f in self.findings]

    @property
    def diagnoses(self) -> list[str]:
        return sorted({c.diagnosis for c in self.checks if c.diagnosis})

    def to_dict(self) -> dict[str, Any]:
        """The record as its file holds it, with what is derived (the totals, ``integrity``: the findings'
        messages) written for a reader too; ``from_dict`` recomputes those, never reads them."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["checks"] = [asdict(c) for c in self.checks]
        data.update(findings=[f.to_dict() for f in self.findings], integrity=list(self.integrity),
                    notes=list(self.notes), unwritten=list(self.unwritten), comments=[list(c) for c in self.comments],
                    complete=True,
                    total=self.total, max_total=self.max_total,
                    categories={k: asdict(v) for k, v in self.categories.items()},
                    cells={k: asdict(v) for k, v in self.cells.items()},
                    notebooks={k: asdict(v) for k, v in self.notebooks.items()})
        return data

    def to_json(self) -> str:
        """Always valid JSON (non-finite floats become null)."""
        return dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Record:
        """The record ``to_dict`` wrote; the totals in it are recomputed, not read."""
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in known}
        check_fields = {f.name for f in fields(CheckResult)}
        kwargs["checks"] = checks = [CheckResult(**{k: v for k, v in c.items() if k in check_fields})
                                     for c in data["checks"]]
        if "findings" in data:
            kwargs["findings"] = tuple(Finding.from_dict(f) for f in data["findings"])
        else:                                                 # written before findings: its parallel lists
            kwargs["findings"] = from_parallel_lists(data, any(c.internal_error for c in checks))
        return cls(**kwargs)

    @classmethod
    def from_json(cls, text: str) -> Record:
        return cls.from_dict(json.loads(text))


def earned(checks: Iterable[CheckResult]) -> Points:
    """The points some checks earned: a record's total, or one grade cell's (``notebook.grade_cell``)."""
    return points(sum(c.points for c in checks))


def points(value: float) -> Points:
    """A number of points as every output shows it: to 6 places (a cell's points scaled to the course's
    add up exactly), a whole number when it is one."""
    return _number(round(float(value), 6))


def _number(value: float) -> Points:
    """A score as a whole number when it is one (a gradebook holds floats)."""
    value = float(value)
    return int(value) if value.is_integer() else value


def _sum_by(checks: Iterable[CheckResult], key: Callable[[CheckResult], str]) -> dict[str, Score]:
    sums: dict[str, list[float]] = {}
    for c in checks:
        found = sums.setdefault(key(c), [0.0, 0.0])
        found[0] += c.points
        found[1] += c.max_points
    return {k: Score(points(earned), points(most)) for k, (earned, most) in sums.items()}


def check_result(grade_id: str, item: Any, outcome: Any) -> CheckResult:
    """The result of rubric ``item`` (a rubric.Item) given the check's ``outcome`` (a checks._base.Outcome)."""
    return CheckResult(grade_id=grade_id, check=item.name, category=item.category,
                       points=item.points if outcome.passed else 0, max_points=item.points,
                       passed=outcome.passed, message=outcome.message, diagnosis=outcome.diagnosis,
                       stage=outcome.stage, details=outcome.details)


def not_graded(grade_id: str, item: Any, message: str) -> CheckResult:
    """A check that could not run at all: 0 points, the reason as its message."""
    return CheckResult(grade_id=grade_id, check=item.name, category=item.category, points=0,
                       max_points=item.points, passed=False, message="Not graded: " + message)
