"""The gradebook's grade cells worth what the course's source notebooks say: re-weighting after release.

An instructor re-weights a cell in ``source/`` (its nbgrader points) and runs ``python -m autograder
release``. nbgrader records a cell's points in the gradebook only at ``generate_assignment``; ``release``
generates the new ``release/`` in a scratch copy, so the course's gradebook kept the old maximum and the
next ``grade`` refused to write scores above it. Here the gradebook's grade cells are brought to the
source's points with the calls ``generate_assignment --force`` makes (``scores.record_assignment``); every
score, comment, due date and person's grade stays where it is. ``release`` does it at once (and says what
changed); the gradebook writer of every ``grade`` does it too, so the gradebook always holds the points
``grade`` grades with.
"""
from __future__ import annotations

from pathlib import Path

from .scores import record_assignment, reweighted
from .url import shown_url, sqlite_path
from .nbgrader_api import nbgrader_api


def scored_by_hand(gb, assignment: str, cells) -> dict[str, int]:
    """grade_id -> how many submissions hold a person's score in that cell (it stands, out of the new maximum)."""
    counts: dict[str, int] = {}
    for submission in gb.find_assignment(assignment).submissions:
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                if grade.name in cells and grade.manual_score is not None:
                    counts[grade.name] = counts.get(grade.name, 0) + 1
    return counts


def record_points(db_url: str, course: Path, assignment: str, course_id: str) -> list[str]:
    """The course's gradebook brought to the source's points, if it holds ``assignment`` (a gradebook not
    made yet is left for nbgrader's commands and ``grade`` to make); one line per change, and per cell a
    person scored. Raises what opening the database raises."""
    if not _holds(db_url, assignment):
        return []
    with nbgrader_api().Gradebook(db_url, course_id) as gb:
        changed = reweighted(gb, course, assignment)
        if not changed:
            return []
        record_assignment(gb, course, assignment)
        gb.db.commit()
        manual = scored_by_hand(gb, assignment, changed)
    where = shown_url(db_url)
    lines = [f"the gradebook {where}: {g} is worth {new:g} (was {'not there' if old is None else f'{old:g}'})"
             for g, (old, new) in sorted(changed.items())]
    lines += [f"{g}: a person's score stands in {n} submission{'s' if n != 1 else ''}, given out of the old "
              "maximum: look at it again in formgrader" for g, n in sorted(manual.items())]
    return lines


def _holds(db_url: str, assignment: str) -> bool:
    """Whether the database exists and records ``assignment`` (read without creating anything)."""
    path = sqlite_path(db_url)
    if path is not None and not path.is_file():
        return False
    from sqlalchemy import create_engine, inspect, text
    from sqlalchemy.pool import NullPool
    engine = create_engine(db_url, poolclass=NullPool)
    try:
        with engine.connect() as db:
            if "assignment" not in inspect(db).get_table_names():
                return False
            return db.execute(text("SELECT count(*) FROM assignment WHERE name = :a"), {"a": assignment}).scalar() > 0
    finally:
        engine.dispose()
