"""The gradebook writer process (see ``autograder.outputs.gradebook``): nbgrader's API, nothing else.

    python -m autograder.gradebook_process DB_URL COURSE ASSIGNMENT < scores.json
"""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

from .seeds import COURSE_ID


def _source_cells(course: Path, assignment: str):
    """(notebook, cell) for every nbgrader cell of the source notebooks."""
    for path in sorted((course / "source" / assignment).glob("*.ipynb")):
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            if cell.get("metadata", {}).get("nbgrader"):
                yield path.stem, cell


def record_assignment(gb, course: Path, assignment: str) -> None:
    """What nbgrader's SaveCells records at generate_assignment, done with the same API calls."""
    from nbformat import from_dict
    from nbgrader.utils import compute_checksum
    cells = list(_source_cells(course, assignment))
    gb.update_or_create_assignment(assignment)
    for name in sorted({nb for nb, _ in cells}):
        gb.update_or_create_notebook(name, assignment)
    for nb_name, cell in cells:
        meta, source = cell["metadata"]["nbgrader"], "".join(cell["source"])
        gid, ctype = meta["grade_id"], cell["cell_type"]
        if meta.get("grade"):
            gb.update_or_create_grade_cell(gid, nb_name, assignment, max_score=float(meta["points"]),
                                           cell_type=ctype)
        if meta.get("solution"):
            gb.update_or_create_solution_cell(gid, nb_name, assignment)
        if meta.get("grade") or meta.get("solution") or meta.get("locked"):
            checksum = compute_checksum(from_dict({**cell, "source": source}))
            gb.update_or_create_source_cell(gid, nb_name, assignment, source=source, cell_type=ctype,
                                            locked=bool(meta.get("locked")), checksum=checksum)


def write_scores(gb, assignment: str, scores: list[dict]) -> None:
    from nbgrader.api import MissingEntry
    for s in scores:
        gb.update_or_create_student(s["student"])
        try:
            submission = gb.find_submission(assignment, s["student"])
        except MissingEntry:
            submission = gb.add_submission(assignment, s["student"])
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                grade.auto_score = float(s["earned"].get(grade.name, 0))
                grade.needs_manual_grade = s["review"] and grade.max_score > 0
    gb.db.commit()


def stamp_new_sqlite(db_url: str) -> None:
    """What nbgrader's Gradebook does for a new database (record the alembic head it was made
    at), done in-process: nbgrader asks a fresh `alembic heads` process, which takes seconds."""
    import sqlite3

    import nbgrader.api
    from alembic.script import ScriptDirectory
    if not db_url.startswith("sqlite:///"):
        return
    path = Path(db_url[len("sqlite:///"):])
    if path.exists() and path.stat().st_size > 0:
        return
    head = ScriptDirectory(str(Path(nbgrader.api.__file__).parent / "alembic")).get_current_head()
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL);")
        db.execute("INSERT INTO alembic_version (version_num) VALUES (?);", (head,))


def main(argv=None) -> int:
    db_url, course, assignment = (argv or sys.argv[1:])[:3]
    warnings.filterwarnings("ignore", message=".*not in session.*")     # nbgrader's own add_submission
    # jsonschema (via nbformat) builds an IRI grammar at import when rfc3987-syntax is installed:
    # a second of start-up for a format check this process never uses. Mark it absent.
    sys.modules.setdefault("rfc3987_syntax", None)
    from nbgrader.api import Gradebook, MissingEntry
    stamp_new_sqlite(db_url)
    with Gradebook(db_url, COURSE_ID) as gb:
        try:
            started = bool(gb.find_assignment(assignment).submissions)
        except MissingEntry:
            started = False
        if not started:                  # idempotent: completes a structure a killed run left half done
            record_assignment(gb, Path(course), assignment)
        write_scores(gb, assignment, json.loads(sys.stdin.read()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
