"""Numbers the report shows about a class: failure rates in order, misconceptions, failures nobody explained."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..grading.rubric import check_title

NOT_GRADED = "Not graded"
STUB = "NotImplementedError"


def failure_rates(records) -> tuple[list[tuple[str, float]], int]:
    """(the check's title in the rubric, % of students failing) for every check someone failed, highest
    first (rubric order among equals), and how many checks every student passed."""
    order = list(dict.fromkeys((c.grade_id, c.check) for r in records for c in r.checks))
    fails = Counter((c.grade_id, c.check) for r in records for c in r.checks if not c.passed)
    failed = sorted((k for k in order if fails[k]), key=lambda k: -fails[k])
    rates = [(check_title(g, c), 100 * fails[(g, c)] / len(records)) for g, c in failed]
    return rates, len(order) - len(failed)


def misconception_counts(records) -> list[tuple[str, int]]:
    """(diagnosis, students) most frequent first."""
    return Counter(d for r in records for d in r.diagnoses).most_common()


@dataclass
class Unexplained:
    """A check that failed with no diagnosis: what the catalogue should learn next."""
    grade_id: str
    check: str
    students: list[str] = field(default_factory=list)
    example: str = ""


def unexplained(c) -> bool:
    """A real attempt that failed and matched no catalogue entry (not a stub, not an ungraded check)."""
    return not c.passed and not c.diagnosis and not c.message.startswith(NOT_GRADED) and STUB not in c.message


def undiagnosed(records) -> list[Unexplained]:
    """Failures without a diagnosis, by check, most students first; submissions under review left out."""
    found: dict[tuple[str, str], Unexplained] = {}
    for r in records:
        if r.needs_review:
            continue
        for c in r.checks:
            if unexplained(c):
                entry = found.setdefault((c.grade_id, c.check), Unexplained(c.grade_id, c.check, example=c.message))
                if r.student_id not in entry.students:
                    entry.students.append(r.student_id)
    return sorted(found.values(), key=lambda u: -len(u.students))
