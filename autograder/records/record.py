"""Result records: typed values built here, totals computed here.

A ``Record`` holds what was graded (the ``CheckResult`` of every check that
ran) and what happened around it (integrity problems, the student's errors and
output). Every total and maximum -- per cell, notebook, category and overall --
is computed from the checks here (the properties below and ``earned``, which
the hidden-test cells' ``grade_cell`` uses too), and every output reads them;
nothing else adds points up.

On disk a record is one JSON file per student (``records.files``).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from functools import cached_property

from ..assignment import CATEGORIES, notebook_of
from .layout import dumps

INTERNAL = "The grader could not run this check (an internal error); an instructor will review it."


@dataclass(frozen=True)
class CheckResult:
    """One rubric check of one grade cell: points earned, the maximum, and what to tell the student."""
    grade_id: str
    check: str
    category: str
    points: int
    max_points: int
    passed: bool
    message: str
    diagnosis: str | None = None
    stage: str | None = None          # with no diagnosis: the stage that deviates (misconceptions/localise.py)
    details: dict = field(default_factory=dict)

    @property
    def notebook(self) -> str:
        return notebook_of(self.grade_id)

    @property
    def internal_error(self) -> bool:
        return "internal_error" in self.details


@dataclass(frozen=True)
class Score:
    earned: int
    max: int


@dataclass(frozen=True)
class CellScore:
    notebook: str
    earned: int
    max: int


@dataclass(frozen=True)
class Record:
    """One student's graded submission. Totals are properties of the checks, never stored apart."""
    student_id: str
    checks: tuple[CheckResult, ...]
    assignment: str = ""
    fingerprint: str = ""
    needs_review: bool = False
    integrity: tuple[str, ...] = ()
    review: tuple[str, ...] = ()          # the instructor's eyes only (classmates' names): never in feedback
    named: dict = field(default_factory=dict)     # a problem in integrity -> the review line that says it
                                                  # naming the classmate (the instructor reads it instead)
    suspicions: tuple[str, ...] = ()      # the problems that accuse (a copy, a link, tampering): never on a
                                          # student's page; a person tells the student (a formgrader comment)
    notes: tuple[str, ...] = ()
    output: str = ""
    sandbox: dict = field(default_factory=dict)
    grader_error: str = ""
    unwritten: tuple[str, ...] = ()     # files the grading process could not write (the instructor's to see)
    flags: dict = field(default_factory=dict)   # notebook -> why its cells need a person; "" (always there
                                                # once kept): the whole submission's problems
    submission: str = ""                  # digest of the submission graded (intake.digest): a resubmission differs
    files: dict = field(default_factory=dict)     # notebook -> the file name intake graded it from
    # What a person set in the gradebook (formgrader), read back when the outputs are written, never
    # graded: grade_id -> that cell's score as nbgrader counts it (manual score, extra credit), the
    # grader's comments as (notebook, cell, text), and whether no cell is left to grade by hand.
    manual: dict = field(default_factory=dict)
    comments: tuple = ()
    reviewed: bool = False

    def __post_init__(self):
        object.__setattr__(self, "checks", tuple(self.checks))
        object.__setattr__(self, "integrity", tuple(self.integrity))
        object.__setattr__(self, "review", tuple(self.review))
        object.__setattr__(self, "suspicions", tuple(self.suspicions))
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
    def auto_total(self) -> int:
        """The points the grader's checks gave, before any score a person set."""
        return earned(self.checks)

    @cached_property
    def max_total(self) -> int:
        return points(sum(c.max_points for c in self.checks))

    @cached_property
    def auto_cells(self) -> dict[str, CellScore]:
        """grade_id -> earned (by the checks) and maximum of that cell, in the order the checks ran."""
        sums: dict[str, list] = {}
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

    def review_reasons(self, notebook: str) -> list[str]:
        """Why the grade cells of ``notebook`` need a person; empty when they do not. A problem of the
        whole submission (its folder, a grader failure) is every notebook's; a check the grader could not
        run is its notebook's. A record written before flags were kept gives its reasons to every notebook."""
        if not self.needs_review:
            return []
        internal = [INTERNAL] if any(c.internal_error and c.notebook == notebook for c in self.checks) else []
        if "" not in self.flags:
            return list(self.integrity) or internal or ["marked for review by the grader"]
        return [*self.flags.get("", []), *self.flags.get(notebook, []), *internal]

    def told_student(self, notebook: str | None = None) -> list[str]:
        """The review reasons a student's page may give (of ``notebook``, or the whole submission's): none
        that accuses, none once a person has graded the review."""
        if not self.open_review:
            return []
        reasons = self.review_reasons(notebook) if notebook else self.integrity
        return [r for r in reasons if r not in self.suspicions]

    @property
    def for_instructor(self) -> list[str]:
        """Every problem once, as the instructor reads it: where a review line names the classmate of a problem,
        that line in its place (the pair is one copy, not two)."""
        instead = set(self.named.values())
        return [*(self.named.get(p, p) for p in self.integrity), *(r for r in self.review if r not in instead)]

    @property
    def diagnoses(self) -> list[str]:
        return sorted({c.diagnosis for c in self.checks if c.diagnosis})

    def to_dict(self) -> dict:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["checks"] = [asdict(c) for c in self.checks]
        data.update(integrity=list(self.integrity), review=list(self.review), suspicions=list(self.suspicions),
                    notes=list(self.notes),
                    unwritten=list(self.unwritten), comments=[list(c) for c in self.comments],
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
    def from_dict(cls, data: dict) -> Record:
        """The record ``to_dict`` wrote; the totals in it are recomputed, not read."""
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in known}
        check_fields = {f.name for f in fields(CheckResult)}
        kwargs["checks"] = [CheckResult(**{k: v for k, v in c.items() if k in check_fields})
                            for c in data["checks"]]
        return cls(**kwargs)

    @classmethod
    def from_json(cls, text: str) -> Record:
        return cls.from_dict(json.loads(text))


def earned(checks) -> int:
    """The points some checks earned: a record's total, or one grade cell's (``notebook.grade_cell``)."""
    return points(sum(c.points for c in checks))


def points(value) -> int | float:
    """A number of points as every output shows it: to 6 places (a cell's points scaled to the course's
    add up exactly), a whole number when it is one."""
    return _number(round(float(value), 6))


def _number(value) -> int | float:
    """A score as a whole number when it is one (a gradebook holds floats)."""
    value = float(value)
    return int(value) if value.is_integer() else value


def _sum_by(checks, key) -> dict[str, Score]:
    sums: dict[str, list] = {}
    for c in checks:
        found = sums.setdefault(key(c), [0.0, 0.0])
        found[0] += c.points
        found[1] += c.max_points
    return {k: Score(points(earned), points(most)) for k, (earned, most) in sums.items()}


def check_result(grade_id: str, item, outcome) -> CheckResult:
    """The result of rubric ``item`` (a rubric.Item) given the check's ``outcome`` (a checks._base.Outcome)."""
    return CheckResult(grade_id=grade_id, check=item.name, category=item.category,
                       points=item.points if outcome.passed else 0, max_points=item.points,
                       passed=outcome.passed, message=outcome.message, diagnosis=outcome.diagnosis,
                       stage=outcome.stage, details=outcome.details)


def not_graded(grade_id: str, item, message: str) -> CheckResult:
    """A check that could not run at all: 0 points, the reason as its message."""
    return CheckResult(grade_id=grade_id, check=item.name, category=item.category, points=0,
                       max_points=item.points, passed=False, message="Not graded: " + message)
