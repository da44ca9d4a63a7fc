"""The diagnosis measured as a classifier over the labelled corpus, in two parts.

``development`` (tests/fixtures/diagnosis/) is what the diagnosis may be tuned on; ``heldout``
(tests/fixtures/diagnosis_heldout/) was written blind to the catalogue's variants and the diagnosis
code, and is only ever run, never read while the diagnosis is changed: it measures what generalises.
Each case is graded in-process (``grade_namespace``, the path the hidden-test cells take) and its
failed checks read as one verdict: the names given (diagnoses), whether a stage was localised, and
whether anything failed at all. Used by tests/misconceptions/test_diagnosis_corpus.py, tests/misconceptions/test_diagnosis_heldout.py
and benchmarks/diagnosis_quality.py.
"""
from __future__ import annotations

import importlib
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import autograder
import corpora
from autograder.misconceptions import COMPOUND
from fixtures.impl import correct_plain

KINDS = corpora.LABELS                          # the labels that are not a diagnosis
PARTS = {"development": "diagnosis", "heldout": "diagnosis_heldout",   # part -> package under tests/fixtures
         "fresh": "diagnosis_fresh",      # a fresh class for one final measurement: only ever run
         "fresh5": "diagnosis_fresh5"}


@dataclass(frozen=True)
class Case:
    name: str
    expected: str              # a catalogue id or compound id, or one of KINDS
    package: str = "diagnosis"

    @property
    def module(self) -> str:
        return f"fixtures.{self.package}.{self.name}"

    def namespace(self) -> dict:
        """The student's functions, from a fresh copy of the module (a module-level cache starts empty, as
        it does for each student), over the right ones for everything the case does not define."""
        mod = importlib.reload(importlib.import_module(self.module))
        own = {k: v for k, v in vars(mod).items()
               if callable(v) and getattr(v, "__module__", None) == mod.__name__ and not k.startswith("_")}
        space = {**_right(), **own}
        _forget_implementations()
        return space

    @property
    def group(self) -> str:
        """What the report groups it under: the id, 'compound', 'triple' or the kind."""
        parts = self.expected.count(COMPOUND) + 1
        return {1: self.expected, 2: "compound", 3: "triple"}[parts]


@dataclass
class Verdict:
    case: Case
    student: str
    names: frozenset           # the diagnoses of the failed checks
    staged: bool               # some failed check names a stage
    failed: int                # failed checks
    full_marks: bool

    @property
    def wrong_names(self) -> frozenset:
        """Names with a part the student did not write: a misnaming (a partial name of a compound is not)."""
        allowed = set() if self.case.expected in KINDS else set(self.case.expected.split(COMPOUND))
        return frozenset(n for n in self.names if not set(n.split(COMPOUND)) <= allowed)

    @property
    def named(self) -> bool:
        return self.case.expected in self.names and not self.wrong_names

    @property
    def localised(self) -> bool:
        return self.staged and not self.wrong_names

    @property
    def right(self) -> bool:
        """Does what the label says: named / localised / nothing named / clean full marks."""
        if self.case.expected == "correct":
            return self.full_marks and not self.names and not self.staged
        if self.case.expected == "unnamed":
            return not self.names and self.failed > 0
        if self.case.expected == "localised":
            return self.localised and not self.names
        return self.named


def _forget_implementations() -> None:
    """The corpus's modules (every case, the right functions) out of ``sys.modules`` once read: a student's
    notebook is graded in a process that holds no other implementation than the grader's (which in-process
    grading hides while the student's code runs, ``autograder.grading.hiding``), so code that searches the
    loaded modules for someone else's ``causal_attention`` finds none here either."""
    for name in [n for n in sys.modules if n.startswith("fixtures.") and n.count(".") >= 2]:
        del sys.modules[name]


def _right() -> dict:
    return {k: v for k, v in vars(correct_plain).items() if callable(v) and not k.startswith("_")}


def cases(part: str = "development") -> list[Case]:
    """The labelled cases of one part of the corpus (empty when that part is not there), as
    ``corpora.load`` reads their ``EXPECTED``."""
    package = PARTS[part]
    return [Case(e.name, e.diagnosis, package) for e in corpora.load(package)]


def classify(case: Case, student_id: str) -> Verdict:
    record = autograder.grade_namespace(case.namespace(), student_id)
    failed = [c for c in record.checks if not c.passed]
    return Verdict(case, student_id, frozenset(c.diagnosis for c in failed if c.diagnosis),
                   any(c.stage for c in failed), len(failed), record.total == record.max_total)


@dataclass
class Scores:
    verdicts: list = field(default_factory=list)

    @property
    def mistakes(self) -> list:
        return [v for v in self.verdicts if v.case.expected not in ("correct", "unnamed")]

    def precision(self) -> float:
        """Of every name given (one per case and name), the share that names only what was written."""
        given = sum(len(v.names) for v in self.verdicts)
        wrong = sum(len(v.wrong_names) for v in self.verdicts)
        return 1.0 if given == 0 else (given - wrong) / given

    def recall(self, localised_counts: bool = True) -> float:
        """Of the mistakes, the share named as labelled (or, when counted, localised without a wrong name)."""
        hit = [v.named or (localised_counts and v.localised) for v in self.mistakes]
        return sum(hit) / len(hit) if hit else 1.0

    def named_recall(self) -> float:
        """Of the cases labelled with a catalogue id (or compound), the share named as labelled."""
        labelled = [v for v in self.verdicts if v.case.expected not in KINDS]
        return sum(v.named for v in labelled) / len(labelled) if labelled else 1.0

    def localised_recall(self) -> float:
        """Of the mistakes (an id or "localised"), the share named as labelled or localised, with no wrong name."""
        return self.recall()

    def wrong_full_marks(self) -> list:
        """Mistakes (anything not labelled correct) that kept every point."""
        return [v for v in self.verdicts if v.case.expected != "correct" and v.full_marks]

    def per_id(self) -> dict[str, tuple[int, int, int, int]]:
        """id -> (cases it was named in, of those the ones that wrote it, cases labelled with it, of those the
        ones named or localised without a wrong name), counting the parts of compounds, each id once per case."""
        named, right, labelled, found = Counter(), Counter(), Counter(), Counter()
        for v in self.verdicts:
            expected = set() if v.case.expected in KINDS else set(v.case.expected.split(COMPOUND))
            for part in expected:
                labelled[part] += 1
                found[part] += v.named or v.localised
            for part in {p for name in v.names for p in name.split(COMPOUND)}:     # once per case
                named[part] += 1
                right[part] += part in expected
        return {i: (named[i], right[i], labelled[i], found[i]) for i in sorted(set(named) | set(labelled))}

    def per_group(self) -> dict[str, dict]:
        out = defaultdict(lambda: Counter())
        for v in self.verdicts:
            row = out[v.case.group]
            row["cases"] += 1
            row["named"] += v.named
            row["localised"] += v.localised and not v.named
            row["misnamed"] += bool(v.wrong_names)
            row["as labelled"] += v.right
        return dict(out)


def score(student_ids: list[str], only: list[Case] | None = None) -> Scores:
    scores = Scores()
    for sid in student_ids:
        for case in cases() if only is None else only:
            scores.verdicts.append(classify(case, sid))
    return scores
