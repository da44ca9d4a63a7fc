"""Result records: typed values built here, totals computed here, JSON on disk written atomically.

A ``Record`` holds what was graded (the ``CheckResult`` of every check that
ran) and what happened around it (integrity problems, the student's errors and
output). Every total and maximum -- per cell, notebook, category and overall --
is computed from the checks here (the properties below and ``earned``, which
the hidden-test cells' ``grade_cell`` uses too), and every output reads them;
nothing else adds points up.

On disk a record is one JSON file per student, written atomically: a write
goes to a temporary file in the same folder, is flushed to disk, then renamed
over the old one, so a crash or a full disk never leaves a half-written
record. A record read back is current when it is for the assignment being
graded and carries the fingerprint of what grades now (see ``fingerprint``);
``--resume`` keeps current records and regrades the rest.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import tempfile
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from functools import cached_property
from pathlib import Path

from .inert import json_safe, shown
from .assignment import CATEGORIES, notebook_of

INTERNAL = "The grader could not run this check (an internal error); an instructor will review it."
_PLAIN_NAME_BYTES = 200          # ids longer than this get a shortened name with a digest


class OutputError(Exception):
    """Writing results failed (e.g. the disk is full); what is already written is intact."""


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
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "unwritten", tuple(self.unwritten))
        object.__setattr__(self, "comments", tuple(tuple(c) for c in self.comments))
        internal = any(c.internal_error for c in self.checks)
        object.__setattr__(self, "needs_review", bool(self.needs_review or internal))

    @cached_property
    def total(self) -> float:
        """The points of every cell, a person's score where one was given (nbgrader's raw score)."""
        return sum(c.earned for c in self.cells.values())

    @cached_property
    def auto_total(self) -> int:
        """The points the grader's checks gave, before any score a person set."""
        return earned(self.checks)

    @cached_property
    def max_total(self) -> int:
        return sum(c.max_points for c in self.checks)

    @cached_property
    def auto_cells(self) -> dict[str, CellScore]:
        """grade_id -> earned (by the checks) and maximum of that cell, in the order the checks ran."""
        out: dict[str, CellScore] = {}
        for c in self.checks:
            old = out.get(c.grade_id, CellScore(c.notebook, 0, 0))
            out[c.grade_id] = CellScore(old.notebook, old.earned + c.points, old.max + c.max_points)
        return out

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
    def open_review(self) -> bool:
        """Flagged for review and not yet graded by hand in the gradebook."""
        return self.needs_review and not self.reviewed

    @cached_property
    def notebooks(self) -> dict[str, Score]:
        out: dict[str, Score] = {}
        for c in self.cells.values():
            old = out.get(c.notebook, Score(0, 0))
            out[c.notebook] = Score(old.earned + c.earned, old.max + c.max)
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

    @property
    def diagnoses(self) -> list[str]:
        return sorted({c.diagnosis for c in self.checks if c.diagnosis})

    def to_dict(self) -> dict:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["checks"] = [asdict(c) for c in self.checks]
        data.update(integrity=list(self.integrity), review=list(self.review), notes=list(self.notes),
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
    return sum(c.points for c in checks)


def _number(value) -> int | float:
    """A score as a whole number when it is one (a gradebook holds floats)."""
    value = float(value)
    return int(value) if value.is_integer() else value


def _sum_by(checks, key) -> dict[str, Score]:
    out: dict[str, Score] = {}
    for c in checks:
        old = out.get(key(c), Score(0, 0))
        out[key(c)] = Score(old.earned + c.points, old.max + c.max_points)
    return out


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


# --- on disk --------------------------------------------------------------------------------

def atomic_write(path: Path, data: bytes | str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
    try:
        replace_atomically(path, raw, 0o666 & ~_umask())   # as a plain open() would: release_feedback copies the mode
    except OSError as exc:
        raise OutputError(f"could not write {path}: {exc.strerror or exc}. Results written before this "
                          "are intact; free some space and run again with --resume.") from exc


def replace_atomically(path: Path, raw: bytes, mode: int) -> None:
    """``raw`` at ``path`` whole or not at all: a temporary file beside it (``mode``), synced, renamed over
    the old one (a link or a second hard link to the old file is never written through), the folder synced
    (or, inside a batch, once at its end). On any exception, a stop signal too, no temporary file is left."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".partial-", suffix=".tmp")   # never grows with the name
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            if _Deferred.folders is None:
                os.fsync(f.fileno())
        os.replace(tmp, path)
        if _Deferred.folders is None:
            _fsync_dir(path.parent)
        else:
            _Deferred.folders.add(path.parent)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    """This process's umask, read without changing it (Linux), else by setting and restoring it."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


class _Deferred:
    folders: set | None = None      # inside ``synced_at_end``: the folders written, made durable at its end


@contextmanager
def synced_at_end():
    """Within this block ``atomic_write`` still never shows a half-written file (a temporary file
    renamed into place), but does not wait for the disk after each file: the block ends with one
    ``syncfs`` per file system written to. A batch writes about ten files per student, and two
    fsyncs each cost more than grading the student on a busy disk. A record lost to a power cut
    before the end is regraded by ``--resume`` (a record that cannot be read counts as missing);
    a process that is killed loses nothing (the kernel still holds what it wrote)."""
    outer, _Deferred.folders = _Deferred.folders, set()
    try:
        yield
    finally:
        folders, _Deferred.folders = _Deferred.folders, outer
        if outer is not None:
            outer |= folders
        else:
            sync_file_systems(folders)


def sync_file_systems(folders) -> None:
    """Flush every file system that holds one of ``folders`` to disk: one syncfs(2) each (a sync(2)
    where syncfs is missing)."""
    seen = set()
    for folder in folders:
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue
        try:
            device = os.fstat(fd).st_dev
            if device not in seen:
                seen.add(device)
                _syncfs(fd)
        finally:
            os.close(fd)


def _syncfs(fd: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if not hasattr(libc, "syncfs") or libc.syncfs(fd) != 0:
        os.sync()


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def file_name(student_id: str, suffix: str = "") -> str:
    """A file name for a student: ``<id><suffix>`` when that is short and plain, else a short id, ``~`` and
    a digest of the whole id.

    Any student id (a folder name of up to 255 bytes, unicode, dots, a leading dash) gives a name that
    fits the file system and never starts with a dot or a dash. The map is one to one: a plain name
    never holds ``~`` and a shortened one always does, so no id's name is another's shortened name (a
    student whose folder was named like a classmate's shortened name once overwrote that record).
    """
    raw = student_id.encode("utf-8", "surrogateescape")
    if (len(raw) <= _PLAIN_NAME_BYTES and not student_id.startswith((".", "-")) and "/" not in student_id
            and "~" not in student_id):
        return student_id + suffix
    stem = "".join(ch for ch in student_id[:40] if ch.isalnum() or ch in "_-.").lstrip(".-")
    return f"{stem}~{hashlib.sha256(raw).hexdigest()[:16]}{suffix}"


def record_path(out: Path, student_id: str) -> Path:
    return Path(out) / "records" / file_name(student_id, ".json")


def check_record_names(student_ids) -> None:
    """Raise ValueError naming both students when two ids would share a record file (never an overwrite)."""
    seen: dict[str, str] = {}
    for student in student_ids:
        name = file_name(student, ".json")
        other = seen.setdefault(name, student)
        if other != student:
            raise ValueError(f"students {shown(other)} and {shown(student)} would share the record file "
                             f"{shown(name)}, so one would overwrite the other; nothing was graded. Rename one "
                             "of the two folders in submitted/ and grade again")


def dumps(value) -> str:
    """Always valid JSON: non-finite floats become null (``json.dumps`` would write NaN), laid out by
    ``laid_out`` (one key, one list item per line)."""
    return laid_out(json_safe(value), sort_keys=True, allow_nan=False)


def laid_out(value, **options) -> str:
    """JSON a person can read and diff, written by json's C encoder: each key of the top-level object on
    a line of its own, and each item of a list it holds on its own line. (``json.dumps`` with ``indent``
    runs in pure Python: for a record or a notebook about five times slower.)"""
    one = lambda v: json.dumps(v, **options)                                        # noqa: E731
    if not isinstance(value, dict) or not value:
        return one(value)
    lines = []
    for key in (sorted(value) if options.get("sort_keys") else value):
        item = value[key]
        if isinstance(item, list) and item:
            text = "[\n" + ",\n".join(f"  {one(v)}" for v in item) + "\n ]"
        else:
            text = one(item)
        lines.append(f" {one(str(key))}: {text}")
    return "{\n" + ",\n".join(lines) + "\n}"


def write_record(out: Path, record: Record) -> None:
    """Write the record atomically; OutputError, naming both, if its file holds another student's record."""
    path = record_path(out, record.student_id)
    other = load_record(out, record.student_id)
    if other is not None and other.student_id != record.student_id:
        raise OutputError(f"{path} holds the record of {shown(other.student_id)}, and {shown(record.student_id)} "
                          "maps to the same file name; it was not overwritten. Rename one of the two folders in "
                          "submitted/ and grade again")
    atomic_write(path, record.to_json())


def load_record(out: Path, student_id: str) -> Record | None:
    """The stored record of this student, or None when there is none or it cannot be read."""
    try:
        return Record.from_json(record_path(out, student_id).read_text())
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def read_record(out: Path, student_id: str, assignment: str, fingerprint: str | None = None) -> Record | None:
    """The stored record for this student and assignment (graded with ``fingerprint`` when given), or None."""
    record = load_record(out, student_id)
    if record is None or record.assignment != assignment or record.student_id != student_id:
        return None
    if fingerprint is not None and record.fingerprint != fingerprint:
        return None
    return record
