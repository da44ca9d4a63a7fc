"""A teaching assistant in formgrader, as a process: manual scores saved with the calls formgrader's
GradeHandler.put makes (one gradebook session per save, manual_score set, needs_manual_grade cleared,
commit), one after another while a grading run writes the same gradebook.

    python tests/helpers/gradebook_editor.py DB_URL RECORDS_DIR CLASS_SIZE GAP STUDENT...

It says when it is ready (nbgrader loaded), then edits until the run has written all records but one (the run then soon reads what people set), and prints one
JSON line per save: the cell, the score, how long its transaction took (the wait a run can cause), and whether the run had already
written the student's record. A save that fails ends it with status 1 and the error.
"""
from __future__ import annotations

import itertools
import json
import sys
import time
import warnings
from pathlib import Path

CELLS = (("ex1_attention", "ex1_attention"), ("ex2_causal_mask", "ex2_causal"))


def save(gb_class, url: str, assignment: str, student: str, notebook: str, grade_id: str, score: float) -> float:
    """One save; the seconds its transaction took (the read and the commit: what a run's lock can hold up)."""
    with gb_class(url, "attention-course") as gb:
        gb.db.commit()                                   # the session's own start-up, done
        started = time.monotonic()
        grade = gb.find_grade(grade_id, notebook, assignment, student)
        grade.manual_score, grade.extra_credit = score, None
        grade.needs_manual_grade = grade.manual_score is None and grade.auto_score is None
        gb.db.commit()
        return time.monotonic() - started


def main(argv: list[str]) -> int:
    url, records, size, gap, students = argv[0], Path(argv[1]), int(argv[2]), float(argv[3]), argv[4:]
    warnings.filterwarnings("ignore")
    from autograder.gradebook.nbgrader_api import nbgrader_api
    Gradebook = nbgrader_api().Gradebook
    targets = itertools.cycle([(s, nb, g) for s in students for nb, g in CELLS])
    print(json.dumps({"ready": True}), flush=True)                # nbgrader loaded: start the run now
    for k in itertools.count():
        done = {p.stem for p in records.glob("*.json")}
        if len(done) >= size - 1:             # the last student is being graded: the run reads soon
            return 0
        student, notebook, grade_id = next(targets)
        score = 0.5 + 0.25 * (k % 7)
        try:
            waited = save(Gradebook, url, "ch04_attention", student, notebook, grade_id, score)
        except Exception as exc:  # noqa: BLE001 - the test reads the error
            print(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:500]}), flush=True)
            return 1
        print(json.dumps({"student": student, "grade_id": grade_id, "score": score, "waited": waited,
                          "graded_before": student in done}), flush=True)
        time.sleep(gap)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
