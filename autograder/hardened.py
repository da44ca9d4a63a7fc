"""Grade one submission safely: intake, sandboxed worker, rubric checks in the grader process."""
from __future__ import annotations

from pathlib import Path

from .grading import build_record, run_cell
from .intake import Intake, collect_cells, expected_cells, read_notebook
from .rubric import FUNCTIONS, NOTEBOOKS, RUBRIC
from .sandbox.limits import Limits
from .sandbox.session import ForkServer
from .sandboxed_student import SandboxedStudent
from .seeds import ASSIGNMENT_ID, student_seed

PACKAGE_COURSE = Path(__file__).resolve().parents[1]


def find_course(start: Path) -> Path:
    """The nearest folder above ``start`` holding nbgrader_config.py and source/, else this package's course."""
    for folder in [start, *start.parents]:
        if (folder / "nbgrader_config.py").exists() and (folder / "source").is_dir():
            return folder
    return PACKAGE_COURSE


def infer_student(path: Path, assignment: str = ASSIGNMENT_ID) -> str:
    folder = path if path.is_dir() else path.parent
    if folder.name == assignment and folder.parent.name:
        return folder.parent.name
    return "anonymous"


def intake_submission(path: Path, course: Path, assignment: str = ASSIGNMENT_ID) -> Intake:
    intake = Intake()
    src_dir, rel_dir = course / "source" / assignment, course / "release" / assignment
    names = [path.stem] if path.is_file() else sorted(p.stem for p in src_dir.glob("*.ipynb"))
    if path.is_file() and path.stem not in NOTEBOOKS:
        intake.damage(f"{path.name} is not one of the assignment's notebooks ({', '.join(NOTEBOOKS)}).")
        return intake
    for name in names:
        target = path if path.is_file() else path / f"{name}.ipynb"
        nb = read_notebook(target, name, intake)
        if nb is not None:
            collect_cells(nb, name, expected_cells(src_dir / f"{name}.ipynb", rel_dir / f"{name}.ipynb"), intake)
    return intake


def grade_submission(path, *, course=None, student_id=None, limits: Limits | None = None,
                     server: ForkServer | None = None, assignment: str = ASSIGNMENT_ID) -> dict:
    """The result record for one submission (a folder of notebooks or one notebook)."""
    path = Path(path).resolve()
    if not path.exists():
        raise ValueError(f"{path} does not exist: give a submission folder "
                         f"(submitted/<student>/{assignment}) or one of its notebooks")
    course = Path(course).resolve() if course else find_course(path)
    student_id = student_id or infer_student(path, assignment)
    intake = intake_submission(path, course, assignment)
    own_server = server is None
    server = server or ForkServer()
    names = sorted({f for fs in FUNCTIONS.values() for f in fs})
    student = SandboxedStudent(server, intake.cells, names, limits or Limits())
    try:
        seed = student_seed(student_id)
        grade_ids = [g for g in RUBRIC if path.is_dir() or g in NOTEBOOKS.get(path.stem, ())]
        checks = [r for g in grade_ids for r in run_cell(student, g, student_id, seed)]
    finally:
        student.close()
        if own_server:
            server.close()
    record = build_record(student_id, checks, integrity=intake.problems + student.events,
                          needs_review=intake.needs_review or bool(student.events))
    record.update(notes=student.notes, output="\n".join(student.outputs), sandbox=student.status,
                  max_total=sum(sum(i.points for i in RUBRIC[g]) for g in grade_ids))
    return record
