"""Grade one submission safely: intake, sandboxed worker, rubric checks in the grader process."""
from __future__ import annotations

import os
from pathlib import Path

from .course import find_course, infer_assignment, infer_student, load_course
from .grading import build_record, run_cell
from .intake import intake_submission  # noqa: F401  (re-exported: tests and benchmarks call it here)
from .intake.names import notebook_for
from .rubric import FUNCTIONS, NOTEBOOKS, RUBRIC
from .sandbox.limits import Limits
from .sandbox.session import ForkServer
from .sandboxed_student import SandboxedStudent
from .seeds import student_seed


def grade_submission(path, *, course=None, student_id=None, limits: Limits | None = None,
                     server: ForkServer | None = None, assignment: str | None = None) -> dict:
    """The result record for one submission (a folder of notebooks or one notebook).

    The course defaults to the one found above ``path``, the assignment and the student to what
    nbgrader's layout (``submitted/<student>/<assignment>``) says."""
    path = Path(os.path.abspath(path))                       # not resolved: links in a submission are not followed
    if not os.path.lexists(path):
        raise ValueError(f"{path} does not exist: give a submission folder "
                         f"(submitted/<student>/<assignment>) or one of its notebooks")
    course = Path(course).resolve() if course else find_course(path)
    assignment = assignment or infer_assignment(path, course)
    student_id = student_id or infer_student(path, assignment)
    intake = intake_submission(path, course, assignment, student_id)
    own_server = server is None
    server = server or ForkServer()
    names = sorted({f for fs in FUNCTIONS.values() for f in fs})
    student = SandboxedStudent(server, intake.cells, names, limits or Limits())
    try:
        seed = student_seed(student_id, load_course(course).course_id, assignment)
        single = path.name.lower().endswith(".ipynb")
        notebook = notebook_for(path.name, NOTEBOOKS) if single else None
        grade_ids = [g for g in RUBRIC if not single or g in NOTEBOOKS.get(notebook, ())]
        checks = [r for g in grade_ids for r in run_cell(student, g, student_id, seed)]
    finally:
        student.close()
        if own_server:
            server.close()
    record = build_record(student_id, checks, integrity=intake.problems + student.events,
                          needs_review=intake.needs_review or bool(student.events))
    record.update(notes=intake.notes + student.notes, output="\n".join(student.outputs), sandbox=student.status,
                  max_total=sum(sum(i.points for i in RUBRIC[g]) for g in grade_ids))
    return record
