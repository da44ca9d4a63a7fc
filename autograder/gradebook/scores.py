"""What the gradebook writer writes into nbgrader's gradebook: the assignment's structure (its notebooks
and grade cells, as ``generate_assignment`` records them), each submission's time and scores as
``nbgrader autograde`` records them, the cells a person must grade (with the reason), and what a person
already graded there (``manual_work``), which is never overwritten."""
from __future__ import annotations

from pathlib import Path

from ..course.notebooks import CourseError, cell_source, nbgrader_meta, read_notebook, source_cells
from .latepenalties import LatePenalties


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


def _record_structure(gb, course: Path, assignment: str) -> None:
    """Idempotent: completes a structure a killed run left half done."""
    from nbgrader.api import MissingEntry
    try:
        started = bool(gb.find_assignment(assignment).submissions)
    except MissingEntry:
        started = False
    if not started:
        record_assignment(gb, course, assignment)
