"""nbgrader's door and a renamed notebook: what ``grade`` gives it, the door gives it too.

nbgrader picks a student's notebooks by name before our steps run: ``ex1_attention (1).ipynb`` is "an
unknown notebook" to it, and the missing ``ex1_attention.ipynb`` scores 0 ("No submitted file"). ``grade``
grades the renamed copy as the notebook it stands for (``intake.names``), so after formgrader's Autograde
button the gradebook said 10 where ``grades.csv`` said 18. The door grades the whole submission as
``grade`` does (``autograde.graded_submission``); for each notebook the record graded from a file of
another name, these write what nbgrader's own steps would have written had the file borne its name: the
autograded notebook (as ``grade`` writes it) in nbgrader's output folder, the grade cells' scores, the
review flags and reason, and the notebook's late penalty (the course's plugin, as nbgrader applies it).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..records import Record, atomic_write
from ..gradebook.latepenalties import LatePenalties
from ..gradebook.scores import auto_grade, review_comment


@dataclass(frozen=True)
class Renamed:
    """One notebook graded from a file of another name: the autograded notebook ``grade`` wrote for it."""
    notebook: str
    file: str
    autograded: str            # the notebook's JSON text


def renamed_notebooks(record: Record, written: Path) -> tuple[Renamed, ...]:
    """The notebooks ``record`` graded from a file not named ``<notebook>.ipynb``, with the autograded
    notebook the grading wrote for each into ``written`` (none where it wrote none)."""
    out = []
    for notebook, file in sorted(record.files.items()):
        path = written / f"{notebook}.ipynb"
        if file and file != f"{notebook}.ipynb" and path.is_file():
            out.append(Renamed(notebook, file, path.read_text(encoding="utf-8")))
    return tuple(out)


def write_renamed(renamed: tuple[Renamed, ...], dest: Path) -> None:
    """Each renamed notebook's autograded copy in nbgrader's output folder for the student, as nbgrader's
    writer leaves one (its permissions are set with the rest when nbgrader finishes the student)."""
    for one in renamed:
        path = dest / f"{one.notebook}.ipynb"
        if not path.exists():
            atomic_write(path, one.autograded)
            os.chmod(path, 0o644)


def score_renamed(gb, info: dict, record: Record, renamed: tuple[Renamed, ...], course) -> None:
    """The gradebook rows of each renamed notebook as ``grade`` writes them (nbgrader's init left them 0):
    each grade cell's auto score, the flag and reason where the notebook needs a person (a cell a person
    scored keeps its own flag), then its late penalty with the course's plugin."""
    submission = gb.find_submission(info["assignment"], info["student"])
    late = LatePenalties(course)
    for one in renamed:
        notebook = gb.find_submission_notebook(one.notebook, info["assignment"], info["student"])
        reasons = record.review_reasons(one.notebook)
        for grade in notebook.grades:
            cell = record.auto_cells.get(grade.name)
            auto_grade(grade, float(cell.earned) if cell else 0.0, bool(reasons) and grade.max_score > 0, fresh=True)
        review_comment(notebook, reasons or None)
        gb.db.flush()
        late.assign_notebook(submission, notebook, info["student"])
