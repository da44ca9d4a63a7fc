"""The gradebook writer process (see ``autograder.gradebook.client``): nbgrader's API, nothing else.

    python -m autograder.gradebook.writer DB_URL COURSE ASSIGNMENT \
        [--parent PID] [--lock-fd FD --lock PATH]... < scores.json > lateness.json

It records each submission's time and scores, assigns late penalties as nbgrader does
(``latepenalties``) and prints, per student, how late the work was and each notebook's
penalty, which the other outputs then show.

With ``--parent`` it dies with the grading run that started it. With
``--lock-fd`` it holds the run's locks (output folder, gradebook; see
``runlock``) and writes only while each lock file is still the one it holds:
an orphan never writes after a newer run started.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import queue
import sys
import threading
import types
import warnings
from pathlib import Path

from ..course.notebooks import CourseError, cell_source, nbgrader_meta, read_notebook, source_cells
from ..course.settings import load_course
from ..run.lifecycle import die_with_parent, ignore_terminal_interrupt
from .client import FAILED
from .latepenalties import LatePenalties
from .runlock import belongs_to_run
from .url import sqlite_path

GONE = 3        # exit status: the run this writer belonged to is over; nothing was written


def _source_cells(course: Path, assignment: str) -> list[tuple[str, dict]]:
    """(notebook, cell) for every nbgrader cell of the source notebooks, read as intake reads them."""
    return [(notebook, cell) for notebook, cells in source_cells(course / "source" / assignment).items()
            for cell in cells]


def record_assignment(gb, course: Path, assignment: str) -> None:
    """What nbgrader's SaveCells records at generate_assignment, done with the same API calls."""
    from nbformat import from_dict
    from nbgrader.utils import compute_checksum
    cells = list(_source_cells(course, assignment))
    handed = _handed_out(course, assignment)
    gb.update_or_create_assignment(assignment)
    for name in sorted({nb for nb, _ in cells}):
        gb.update_or_create_notebook(name, assignment)
    for nb_name, cell in cells:
        meta, source = nbgrader_meta(cell), cell_source(cell)
        gid, ctype = meta["grade_id"], cell["cell_type"]
        if meta.get("solution") and (nb_name, gid) in handed:
            source = handed[nb_name, gid]        # as SaveCells sees it: after ClearSolutions, never the answer
        if meta.get("grade"):
            gb.update_or_create_grade_cell(gid, nb_name, assignment, max_score=float(meta["points"]),
                                           cell_type=ctype)
        if meta.get("solution"):
            gb.update_or_create_solution_cell(gid, nb_name, assignment)
        if meta.get("grade") or meta.get("solution") or meta.get("locked"):
            checksum = compute_checksum(from_dict({**cell, "source": source}))
            gb.update_or_create_source_cell(gid, nb_name, assignment, source=source, cell_type=ctype,
                                            locked=bool(meta.get("locked")), checksum=checksum)


def _handed_out(course: Path, assignment: str) -> dict:
    """(notebook, grade_id) -> the release's text of each answer cell: nbgrader records an answer cell's
    source and checksum with the solution cleared, so its "No response." test finds an untouched cell."""
    out = {}
    for path in sorted((Path(course) / "release" / assignment).glob("*.ipynb")):
        try:
            cells = read_notebook(path).get("cells")
        except CourseError:
            continue
        for cell in cells if isinstance(cells, list) else []:
            if isinstance(cell, dict) and nbgrader_meta(cell).get("solution"):
                out[path.stem, nbgrader_meta(cell).get("grade_id")] = cell_source(cell)
    return out


def write_scores(gb, assignment: str, scores, late: LatePenalties, ours=lambda: True,
                 course: Path | None = None) -> dict:
    """Scores and submission times as ``nbgrader autograde`` records them, each as it comes (``scores``
    may be the run's stream); then its late penalties. Nothing is committed here (``one_transaction``).
    With ``course`` (whose autograded notebooks are this gradebook's), unanswered cells get "No response."."""
    unfit, students = [], []
    for s in scores:
        _write_score(gb, assignment, s, unfit, course)
        students.append(s["student"])
    if not students and not getattr(scores, "received", True):
        raise Gone("it sent no scores")
    if unfit:
        raise SystemExit(_unfit_message(assignment, unfit))   # before any commit: nothing is written
    gb.db.commit()
    lateness = {student: late.assign(gb, assignment, student) for student in dict.fromkeys(students)}
    if not ours():
        raise Gone("before the scores were written")
    gb.db.commit()
    return {student: {**answer, **manual_work(gb.find_submission(assignment, student))}
            for student, answer in lateness.items()}


def _auto_grade(grade, score: float, review: bool, *, fresh: bool) -> None:
    """The grader's score of one cell, and whether a person must grade it. A person's work is kept:
    a cell with a manual score is never flagged again, and a flag is set only on a cell this run
    graded (``fresh``) or never graded before, so a flag a person cleared stays cleared."""
    unseen = grade.auto_score is None
    grade.auto_score = score
    if grade.manual_score is None and (fresh or unseen):
        grade.needs_manual_grade = review


def manual_work(submission) -> dict:
    """What a person set in formgrader on this submission: each cell's score where a manual score or
    extra credit was given (as nbgrader's Grade.score counts it), the comments, and whether any cell
    still needs grading by hand."""
    grades = [g for nb in submission.notebooks for g in nb.grades]
    return {"manual": {g.name: _person_score(g) for g in grades if g.manual_score is not None or g.extra_credit},
            "comments": [[nb.name, c.name, c.manual_comment] for nb in submission.notebooks
                         for c in sorted(nb.comments, key=lambda c: c.name) if c.manual_comment],
            "needs_manual_grade": any(g.needs_manual_grade for g in grades)}


def _person_score(grade) -> float:
    """nbgrader's Grade.score, computed from the row as it is now (the column is read once per session)."""
    base = grade.manual_score if grade.manual_score is not None else grade.auto_score
    return float(base or 0.0) + float(grade.extra_credit or 0.0)


MAX_COMMENT = 2000


def review_comment(notebook, reasons: list[str] | None, unanswered: frozenset = frozenset()) -> None:
    """Why this notebook needs a person, as the auto comment of its answer cells (formgrader shows it
    beside the cell; feedback shows it to the student, so only student-safe reasons come here); else
    "No response." on an answer cell left as handed out, as nbgrader's SaveAutoGrades writes it. A
    grader's own comment is never touched; an earlier run's reason goes when the notebook no longer needs one."""
    text = None
    if reasons:
        text = "The hardened grader marked this notebook for review: " + " ".join(reasons)
        text = text if len(text) <= MAX_COMMENT else text[:MAX_COMMENT - 1] + "\u2026"
    for comment in notebook.comments:
        comment.auto_comment = text or ("No response." if comment.name in unanswered else None)


def no_response(course: Path | None, assignment: str, student: str, notebook: str) -> frozenset:
    """The answer cells of the autograded notebook ``grade`` wrote that are exactly as the release hands them
    out (what nbgrader's checksum test finds); none without that notebook."""
    if course is None:
        return frozenset()
    try:
        mine = read_notebook(Path(course) / "autograded" / student / assignment / f"{notebook}.ipynb")
        handed = read_notebook(Path(course) / "release" / assignment / f"{notebook}.ipynb")
    except CourseError:
        return frozenset()
    given = {nbgrader_meta(c).get("grade_id"): cell_source(c) for c in _cells(handed)
             if nbgrader_meta(c).get("solution")}
    return frozenset(gid for c in _cells(mine) if (gid := nbgrader_meta(c).get("grade_id")) in given
                     and not nbgrader_meta(c).get("task") and cell_source(c) == given[gid])


def _cells(nb: dict) -> list:
    cells = nb.get("cells")
    return [c for c in cells if isinstance(c, dict)] if isinstance(cells, list) else []


def _write_score(gb, assignment: str, s: dict, unfit: list[str], course: Path | None = None) -> None:
    submission = _submission(gb, assignment, s["student"], s.get("submitted") or None)
    known = {grade.name for notebook in submission.notebooks for grade in notebook.grades}
    unfit += [f"{s['student']}: no grade cell {g!r}" for g in s["earned"] if g not in known]
    for notebook in submission.notebooks:
        reasons = (s.get("flags") or {}).get(notebook.name)
        for grade in notebook.grades:
            _auto_grade(grade, float(s["earned"].get(grade.name, 0)), bool(reasons) and grade.max_score > 0,
                        fresh=s.get("fresh", True))
            if grade.auto_score > grade.max_score:
                unfit.append(f"{s['student']}: {grade.name} scores {grade.auto_score:g} over its maximum "
                             f"{grade.max_score:g}")
        review_comment(notebook, reasons, no_response(course, assignment, s["student"], notebook.name))


class Gone(Exception):
    """The run that started this writer is over (or sent nothing): nothing is written."""


class Incoming:
    """The run's scores, read from stdin by a thread from the writer's start, so the run never waits to
    send one (a pipe holds 64 KiB) while nbgrader loads: one JSON object per line (one student) or a
    JSON list of them, sent as each record is written; the end of stdin ends the class."""

    def __init__(self, stream):
        self.received = False                # anything at all, even an empty list
        self.lines: queue.Queue = queue.Queue()
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream) -> None:
        try:
            for line in stream:
                self.lines.put(line)
        finally:
            self.lines.put(None)

    def __iter__(self):
        while (line := self.lines.get()) is not None:
            if not line.strip():
                continue
            self.received = True
            value = json.loads(line)
            yield from value if isinstance(value, list) else [value]


def _unfit_message(assignment: str, unfit: list[str]) -> str:
    more = f" and {len(unfit) - 3} more" if len(unfit) > 3 else ""
    return (f"the gradebook does not hold {assignment} as the rubric grades it ({'; '.join(unfit[:3])}{more}), "
            f"so nothing was written to it. Its grade cells come from `nbgrader generate_assignment "
            f"{assignment} --force`, which nbgrader refuses while submissions are recorded (an earlier "
            "autograde that found no notebooks leaves empty ones): remove them or start a new gradebook, run "
            "generate_assignment --force, then `grade --resume`. grades.csv and the feedback are written.")


def _submission(gb, assignment: str, student: str, submitted: str | None):
    """The student's submission, with its time when timestamp.txt gave one (else the one recorded before)."""
    from nbgrader.api import MissingEntry
    from nbgrader.utils import parse_utc
    gb.update_or_create_student(student)
    try:
        submission = gb.find_submission(assignment, student)
    except MissingEntry:
        submission = gb.add_submission(assignment, student)
    if submitted:
        submission.timestamp = parse_utc(submitted)
    return submission


def stamp_new_sqlite(db_url: str) -> None:
    """What nbgrader's Gradebook does for a new database (record the alembic head it was made
    at), done in-process: nbgrader asks a fresh `alembic heads` process, which takes seconds."""
    path = sqlite_path(db_url)
    if path is None:
        return
    if path.exists() and path.stat().st_size > 0:
        return                                      # (alembic loads in about 0.1 s: only for a new one)
    import sqlite3

    import nbgrader.api
    from alembic.script import ScriptDirectory
    head = ScriptDirectory(str(Path(nbgrader.api.__file__).parent / "alembic")).get_current_head()
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL);")
        db.execute("INSERT INTO alembic_version (version_num) VALUES (?);", (head,))


class RunCheck:
    """Does this writer still belong to the live run that started it?"""

    def __init__(self, parent: int | None, lock_fds: list[int], locks: list[str]):
        if len(lock_fds) != len(locks):
            raise SystemExit("give one --lock PATH for each --lock-fd")
        self.parent, self.locks = parent, list(zip(lock_fds, map(Path, locks)))

    def ours(self) -> bool:
        if self.parent and os.getppid() != self.parent:
            return False
        return all(belongs_to_run(fd, path) for fd, path in self.locks)


def _parse(argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m autograder.gradebook.writer")
    for name in ("db_url", "course", "assignment"):
        parser.add_argument(name)
    parser.add_argument("--parent", type=int, default=None, help="die with this process (the run's)")
    parser.add_argument("--lock-fd", type=int, action="append", default=[],
                        help="inherited descriptor of one of the run's locks")
    parser.add_argument("--lock", action="append", default=[], help="path of that lock file")
    return parser.parse_args(argv)


def _gone(what: str) -> int:
    print(f"the grading run that started this gradebook writer is over ({what}); nothing written",
          file=sys.stderr)
    return GONE


def main(argv=None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    try:
        return _main(args)
    except Exception as exc:  # noqa: BLE001 - any failure is one line for the instructor, not a traceback
        print(FAILED + failure(exc, args.db_url), file=sys.stderr)
        return 1


def failure(exc: Exception, db_url: str) -> str:
    """Why the gradebook could not be written, and what to do, in one line."""
    where = sqlite_path(db_url) or db_url
    text = " ".join(str(exc).split())
    if "database is locked" in text:
        return (f"{where} is locked by another program writing to it (formgrader saving a grade, an nbgrader "
                "command, a sqlite3 shell): let it finish or close it, then run grade --resume, which writes "
                "the scores without grading again")
    if "readonly database" in text or "read-only" in text:
        return (f"{where} cannot be written (it is read-only, or ?mode=ro asks for that): give a gradebook "
                "you can write with --gradebook, then run grade --resume")
    if type(exc).__name__ == "OperationalError":
        return (f"the database {where} refused the scores ({text[:300]}); fix the database or give another "
                "with --gradebook, then run grade --resume")
    if isinstance(exc, RuntimeError):
        return text[:600]
    return f"{where}: {type(exc).__name__}: {text[:300]}"


def _main(args) -> int:
    if args.parent:
        die_with_parent(args.parent)
    ignore_terminal_interrupt()
    run = RunCheck(args.parent, args.lock_fd, args.lock)
    if not run.ours():
        return _gone("before start")
    incoming = Incoming(sys.stdin)                       # scores may come while nbgrader loads
    warnings.filterwarnings("ignore", message=".*not in session.*")     # nbgrader's own add_submission
    # jsonschema (via nbformat) builds an IRI grammar at import when rfc3987-syntax is installed:
    # a second of start-up for a format check this process never uses. Mark it absent.
    sys.modules.setdefault("rfc3987_syntax", None)
    Gradebook = nbgrader_api().Gradebook
    stamp_new_sqlite(args.db_url)
    course = load_course(args.course)
    with Gradebook(args.db_url, course.course_id) as gb:
        if not run.ours():
            return _gone("while loading nbgrader")
        with one_transaction(gb):
            _record_structure(gb, Path(args.course), args.assignment)
        try:
            with contextlib.redirect_stdout(sys.stderr), one_transaction(gb):   # stdout: only the answer
                own = course.root if course.db_url == args.db_url else None     # grade wrote its autograded/
                lateness = write_scores(gb, args.assignment, incoming, LatePenalties(course), run.ours, own)
        except Gone as gone:
            return _gone(str(gone))
    print(json.dumps(lateness))
    return 0


def nbgrader_api():
    """nbgrader's gradebook API (``nbgrader.api``), loaded without running nbgrader's package
    ``__init__``: that one registers nbgrader's Jupyter server extensions, importing jupyter_server,
    tornado's web stack and nbconvert, about half of this process's start-up, none of which a
    writer uses. nbgrader's modules import each other relatively, so the package object only needs
    its ``__path__`` (and ``__version__``, which nbgrader's apps read)."""
    if "nbgrader" not in sys.modules:
        spec = importlib.util.find_spec("nbgrader")
        if spec is None or spec.submodule_search_locations is None:
            raise SystemExit("nbgrader is not installed in this environment: pip install nbgrader")
        package = importlib.util.module_from_spec(spec)
        sys.modules["nbgrader"] = package
        from nbgrader._version import __version__
        package.__version__ = __version__
    # nbgrader.utils imports setuptools for its archive helpers, which a writer never calls: about
    # 0.1 s of CPU while the class is graded. They load when one is called.
    with defer_functions("setuptools.archive_util", ("unpack_archive", "unpack_tarfile", "unpack_zipfile")):
        import nbgrader.api
    return nbgrader.api


@contextlib.contextmanager
def defer_functions(module: str, names: tuple[str, ...]):
    """Within the block ``module`` is a stand-in that holds only ``names`` (``from module import name``
    then costs nothing); the first call of one imports the real module. The stand-in leaves
    ``sys.modules`` when the block ends, so that whatever imports ``module`` later (an instructor's
    late-penalty plugin importing setuptools, in the writer) gets the real one, whole."""
    if module in sys.modules:
        yield
        return
    shim = types.ModuleType(module)

    def real():
        if sys.modules.get(module) is shim:
            del sys.modules[module]
        return importlib.import_module(module)
    for name in names:
        setattr(shim, name, lambda *args, _name=name, **kwargs: getattr(real(), _name)(*args, **kwargs))
    sys.modules[module] = shim
    try:
        yield
    finally:
        if sys.modules.get(module) is shim:
            del sys.modules[module]


@contextlib.contextmanager
def one_transaction(gb):
    """The block's writes as one transaction: nbgrader's API commits after every row it creates
    (a student, a submission, each cell), and on SQLite each commit waits for the disk (88 commits,
    about 3 s, for a class of 12). Inside the block a commit only flushes (ids are assigned, queries
    see the rows); the block commits once at its end, or rolls back if it fails, so a failed block
    leaves the gradebook as it was."""
    session = gb.db
    session.commit = session.flush            # an attribute of this session object, for this block
    try:
        yield
    except BaseException:
        del session.commit
        session.rollback()
        raise
    del session.commit
    session.commit()


def _record_structure(gb, course: Path, assignment: str) -> None:
    """Idempotent: completes a structure a killed run left half done."""
    from nbgrader.api import MissingEntry
    try:
        started = bool(gb.find_assignment(assignment).submissions)
    except MissingEntry:
        started = False
    if not started:
        record_assignment(gb, course, assignment)


if __name__ == "__main__":
    from ..run.lifecycle import exit_now
    exit_now(main())
