"""What intake hands to the grader: the student's code cells, where the grade cells stand, and what was
wrong with the files."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..records.finding import Finding


@dataclass
class CodeCell:
    notebook: str
    index: int
    source: str


@dataclass(frozen=True)
class GradeCell:
    """Where a grade (test) cell stands in the submitted notebook: its checks run at that point."""
    notebook: str
    index: int
    grade_id: str


@dataclass(frozen=True)
class IntegrityEvent:
    """A link, copy or shared secret that points at someone else's work (``integrity``'s five checks).
    ``message`` goes to the record's findings (to the student's feedback only once a person says so, when it
    is a ``suspicion``); ``private`` (e.g. a classmate's name) is for the instructor's eyes only; ``withholds``:
    the notebook is not graded."""
    message: str
    private: str = ""
    withholds: bool = False
    suspicion: bool = True


@dataclass
class Intake:
    cells: list[CodeCell] = field(default_factory=list)
    grade_cells: list[GradeCell] = field(default_factory=list)   # in notebook order; never run, only placed
    findings: list[Finding] = field(default_factory=list)  # damage and integrity events (need review)
    notes: list[str] = field(default_factory=list)        # worth telling the student, not a problem
    files: dict[str, str] = field(default_factory=dict)   # notebook -> the file it was read from
    needs_review: bool = False
    layout: dict[str, list] = field(default_factory=dict)  # notebook -> its checked cells (cells.Cell), in order
    secret: bytes | None = None   # submission_secret.txt when usable and the submission's own (None: not so)
    submission: str = ""          # the digest of the bytes graded (intake.digest), what records carry

    @property
    def problems(self) -> list[str]:
        """Every finding's message, in the order found."""
        return [f.message for f in self.findings]

    def flags(self) -> dict[str, list[str]]:
        """notebook -> the problems of that notebook; "" -> those of the whole submission (its folder, say)."""
        out: dict[str, list[str]] = {}
        for f in self.findings:
            out.setdefault(f.notebook, []).append(f.message)
        return out

    def damage(self, message: str, private: str = "", *, suspicion: bool = False) -> None:
        """``message`` may reach the student's feedback unless it is a ``suspicion`` (what a machine suspects
        about integrity: a person decides what the student is told); ``private`` (e.g. a classmate's name)
        never does."""
        self.findings.append(Finding(message, private=private, accuses=suspicion))
        self.needs_review = True

    def flag(self, event: IntegrityEvent) -> None:
        """Record an integrity event as it says: its message, its private detail, whether it accuses."""
        self.damage(event.message, event.private, suspicion=event.suspicion)

    def about(self, notebook: str, since: int) -> None:
        """The findings from index ``since`` on are about ``notebook`` (found while reading it)."""
        self.findings[since:] = [replace(f, notebook=notebook) for f in self.findings[since:]]

    def note(self, message: str) -> None:
        self.notes.append(message)


class Refused(Exception):
    """A file or folder intake will not read; the message is for the student and the instructor."""
