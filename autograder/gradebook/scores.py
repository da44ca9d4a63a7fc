"""What the gradebook writer writes into nbgrader's gradebook: the assignment's structure (its notebooks
and grade cells, as ``generate_assignment`` records them), each submission's time and scores as
``nbgrader autograde`` records them, the cells a person must grade (with the reason), and what a person
already graded there (``manual_work``), which is never overwritten."""
from __future__ import annotations

from pathlib import Path

from ..course.notebooks import CourseError, cell_source, nbgrader_meta, read_notebook, source_cells
from ..inert import shown, visible
from .latepenalties import LatePenalties, recorded_lateness
from .messages import Answer, Scores
from .schema import BY_HAND, Limits, refusal, storable
from .transactions import GradebookGone, database_error, is_conflict, is_gone, short_transaction
from .nbgrader_api import nbgrader_api


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


def reweighted(gb, course: Path, assignment: str) -> dict[str, tuple[float | None, float]]:
    """grade_id -> (the gradebook's maximum, or None where it has no such cell; the source's points) of
    each grade cell whose points the gradebook does not hold."""
    from nbgrader.api import MissingEntry
    try:
        held = {c.name: float(c.max_score) for nb in gb.find_assignment(assignment).notebooks for c in nb.grade_cells}
    except MissingEntry:
        held = {}
    wanted = {nbgrader_meta(c)["grade_id"]: float(nbgrader_meta(c)["points"]) for _, c in _source_cells(course, assignment)
              if nbgrader_meta(c).get("grade")}
    return {g: (held.get(g), p) for g, p in wanted.items() if held.get(g) != p}


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


BATCH = 4           # students per transaction at most: a person saving in formgrader waits no longer than this


def write_scores(gb, assignment: str, scores, late: LatePenalties, ours=lambda: True,
                 course: Path | None = None, stats: dict | None = None) -> dict[str, Answer]:
    """Scores, submission times and late penalties as ``nbgrader autograde`` records them, each as it comes
    (``scores`` may be the run's stream), in short transactions: the students that have come (at most
    ``BATCH``) are one transaction, all of each student's rows or none, so people using the gradebook
    (formgrader) wait at most one batch, and a run killed at any moment leaves every student whole.
    Then, per student, how late the work was and what a person set there, read as it is at the end.
    With ``course`` (whose autograded notebooks are this gradebook's), unanswered cells get "No response."."""
    cells = short_transaction(gb, lambda: _grade_cells(gb, assignment), read_only=True)
    limits = Limits.of(_api())
    students: list[str] = []
    refused: dict[str, str] = {}
    differed: dict[str, dict[str, float]] = {}
    for batch in _batches(scores):
        unfit = [problem for s in batch for problem in _unfit(s, cells)]
        if unfit:
            raise SystemExit(_unfit_message(assignment, unfit, students))
        refused.update({s.student: why for s in batch if (why := refusal(s, limits))})
        fit = [s for s in batch if s.student not in refused]
        refused.update(_write_each(gb, fit, lambda some: differed.update(
            _write_batch(gb, assignment, some, late, ours, course)), stats))
        students += [s.student for s in fit if s.student not in refused]
    if not students and not refused and not getattr(scores, "received", True):
        raise Gone("it sent no scores")
    answer: dict = {s: Answer(refused=why) for s, why in refused.items()}
    for names in _chunks(list(dict.fromkeys(students))):
        short_transaction(gb, lambda: answer.update({s: _answer(gb, assignment, s, differed.get(s))
                                                     for s in names}), read_only=True)  # noqa: B023 - runs now
    return answer


def _write_each(gb, batch: list[Scores], write, stats) -> dict[str, str]:
    """``write(batch)`` as one transaction; if it fails for a reason of its rows (not a database gone, a
    conflict that outlasted its retries or the run over), each student again alone, so that only the student
    whose rows fail is left out. student -> why."""
    if not batch:
        return {}
    try:
        short_transaction(gb, lambda: write(batch), stats=stats)
        return {}
    except (Gone, GradebookGone):
        raise
    except Exception as exc:  # noqa: BLE001 - whatever a row raised is that row's: it is isolated below
        if is_gone(exc) or is_conflict(exc):
            raise
        if len(batch) == 1:
            return {batch[0].student: row_failure(batch[0].student, exc)}
    refused: dict[str, str] = {}
    for s in batch:
        refused.update(_write_each(gb, [s], write, stats))
    return refused


def row_failure(student: str, exc: BaseException) -> str:
    """One line: the database refused this student's rows, why, and what to do."""
    cause = database_error(exc)
    why = " ".join(str(getattr(cause, "orig", None) or cause).split("\n")[0].split())[:200]
    return f"the gradebook refused the rows of {shown(student)} ({type(cause).__name__}: {why}); {BY_HAND}"


def _api():
    return nbgrader_api()


def _write_batch(gb, assignment: str, batch: list[Scores], late: LatePenalties, ours,
                 course) -> dict[str, dict[str, float]]:
    """The batch's rows; per student whose record this run did not grade, the cells whose automatic score
    in the gradebook was not the record's (what it was)."""
    differed = {}
    for s in batch:
        if found := _write_score(gb, assignment, s, course):
            differed[s.student] = found
        late.assign(gb, assignment, s.student)
    gb.db.flush()
    if not ours():
        raise Gone("before the scores were written")
    return differed


def _answer(gb, assignment: str, student: str, differed: dict[str, float] | None = None) -> Answer:
    submission = gb.find_submission(assignment, student)
    return Answer.from_dict({**recorded_lateness(submission), **manual_work(submission), "differed": differed or {}})


def _batches(scores):
    """Lists of at most ``BATCH`` scores: as many as have come from the run's stream (``Incoming.batches``)."""
    if hasattr(scores, "batches"):
        yield from scores.batches(BATCH)
    elif isinstance(scores, (list, tuple)):
        yield from _chunks(list(scores))
    else:
        yield from ([s] for s in scores)          # a stream that cannot say what has come: one at a time


def _chunks(items: list) -> list[list]:
    return [items[i:i + BATCH] for i in range(0, len(items), BATCH)]


def _grade_cells(gb, assignment: str) -> dict[str, float]:
    """grade_id -> max score of each grade cell the gradebook holds for ``assignment``."""
    return {cell.name: float(cell.max_score) for nb in gb.find_assignment(assignment).notebooks
            for cell in nb.grade_cells}


def _unfit(s: Scores, cells: dict[str, float]) -> list[str]:
    """Why these scores do not fit the gradebook's grade cells (none when they do)."""
    return ([f"{shown(s.student)}: no grade cell {shown(g)}" for g in s.earned if g not in cells]
            + [f"{shown(s.student)}: {g} scores {v:g} over its maximum {cells[g]:g}"
               for g, v in s.earned.items() if g in cells and v > cells[g]])


def auto_grade(grade, score: float, review: bool, *, fresh: bool) -> None:
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
REVIEW_COMMENT = "The hardened grader marked this notebook for review: "    # for formgrader: never in feedback
KEPT_AT_TOP = " (Formgrader shows this until you type; the note at the top of the notebook keeps it.)"


def review_comment(notebook, reasons: list[str] | None, unanswered: frozenset = frozenset()) -> None:
    """Why this notebook needs a person, as the auto comment of its answer cells (formgrader shows it
    beside the cell; generate_feedback's ``ForStudents`` leaves it out of the student's page); else
    "No response." on an answer cell left as handed out, as nbgrader's SaveAutoGrades writes it. A
    grader's own comment is never touched; an earlier run's reason goes when the notebook no longer needs one.
    A reason may hold a student's text (a file name): formgrader shows it as it is, so it is ``inert.visible``."""
    text = None
    if reasons:
        text, room = REVIEW_COMMENT + " ".join(map(visible, reasons)), MAX_COMMENT - len(KEPT_AT_TOP)
        text = storable((text if len(text) <= room else text[:room - 1] + "\u2026") + KEPT_AT_TOP)
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


def _write_score(gb, assignment: str, s: Scores, course: Path | None = None) -> dict[str, float]:
    """One student's rows; returns, for a record this run did not grade (``--resume``), each cell whose
    automatic score in the gradebook was another (a door that graded otherwise, an edit): what it was."""
    submission = _submission(gb, assignment, s.student, s.submitted or None)
    differed = {}
    for notebook in submission.notebooks:
        reasons = list(s.flags.get(notebook.name, ())) or None
        for grade in notebook.grades:
            score = float(s.earned.get(grade.name, 0))
            if not s.fresh and grade.auto_score is not None and abs(float(grade.auto_score) - score) > 1e-6:
                differed[grade.name] = float(grade.auto_score)
            auto_grade(grade, score, bool(reasons) and grade.max_score > 0, fresh=s.fresh)
        reasons = _on_other_work(notebook, reasons, s.changed)
        review_comment(notebook, reasons, no_response(course, assignment, s.student, notebook.name))
    return differed


OTHER_WORK = "the student handed in other work since a person scored"
ON_OTHER_WORK = OTHER_WORK + (" {cells} (a resubmission, or an earlier one collected): that score stands on the new "
                              "work until you look at it again")


def _on_other_work(notebook, reasons: list[str] | None, changed: bool) -> list[str] | None:
    """With ``changed`` (the work graded now is not the work a person scored), the cells of ``notebook`` a
    person scored are flagged for that person again, and why is said; the score stays theirs. The reason
    stays, on later runs, while such a cell is still flagged (until the person saves it in formgrader)."""
    scored = [g for g in notebook.grades if g.manual_score is not None]
    if changed:
        for grade in scored:
            grade.needs_manual_grade = True
    elif not any(OTHER_WORK in (c.auto_comment or "") for c in notebook.comments):
        return reasons
    waiting = [g.name for g in scored if g.needs_manual_grade]
    return [*(reasons or []), ON_OTHER_WORK.format(cells=", ".join(waiting))] if waiting else reasons


class Gone(Exception):
    """The run that started this writer is over (or sent nothing): nothing is written."""


def _unfit_message(assignment: str, unfit: list[str], written: list[str]) -> str:
    more = f" and {len(unfit) - 3} more" if len(unfit) > 3 else ""
    what = (f"the scores of the {len(written)} students before them were written, the others not" if written
            else "nothing was written to it")
    return (f"the gradebook does not hold {assignment} as the rubric grades it ({'; '.join(unfit[:3])}{more}), "
            f"so {what}. Its grade cells come from the source notebooks' points: run `python -m autograder "
            f"release --course COURSE` (or `nbgrader generate_assignment {assignment} --force`), which records "
            "them and keeps every score, comment and due date, then `grade --resume`.")


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


def _record_structure(gb, course: Path, assignment: str) -> None:
    """Idempotent: completes a structure a killed run left half done, and brings the grade cells to the
    points ``grade`` grades with (a cell re-weighted in source/ since ``generate_assignment``)."""
    from nbgrader.api import MissingEntry
    try:
        started = bool(gb.find_assignment(assignment).submissions)
    except MissingEntry:
        started = False
    if not started or reweighted(gb, course, assignment):
        record_assignment(gb, course, assignment)
