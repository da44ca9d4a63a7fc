"""The visible-test cells of a submission, run in a sandboxed worker (``watch`` with show = "visible").

The cells are the course's text of them (which the student already has), placed where the submission
places them, after the cells before them; their pass or failure message is what the student sees. A visible
test's code is a locked cell of its own above it (``<grade_id>_code``, so nbgrader's Validate shows the short
call and then the advice): each test runs after the course's text of its notebook's code cells up to its own.
"""
from __future__ import annotations

from ..assignment import FUNCTIONS
from ..intake import CodeCell
from ..grading.rubric import RUBRIC
from ..intake import intake_submission
from ..intake.expected import notebooks_of
from .job import Job, VisibleResult
from .sandboxed_student import SandboxedStudent


def visible_tests(job: Job, server) -> dict[str, list[VisibleResult]]:
    """notebook -> the result of each of its visible-test cells, in the order the submission places them."""
    intake = intake_submission(job.folder, job.view, job.student)
    out = {}
    for notebook, expected in notebooks_of(job.view).expected.items():
        tests = _tests_with_their_code(expected)
        at = {g.grade_id: g.index for g in intake.grade_cells if g.notebook == notebook and g.grade_id in tests}
        last = max([c.index for c in intake.cells if c.notebook == notebook] + list(at.values()) + [0])
        placed = {gid: at.get(gid, last + 1 + n) for n, gid in enumerate(sorted(tests))}
        cells = sorted([c for c in intake.cells if c.notebook == notebook] +
                       [CodeCell(notebook, index, tests[gid]) for gid, index in placed.items()],
                       key=lambda c: c.index)
        worker = SandboxedStudent(server, cells, FUNCTIONS.get(notebook, ()), job.limits, notebook=notebook,
                                  start=False)
        try:
            worker.run_to(None)
        finally:
            worker.close()
        out[notebook] = [_result(gid, index, notebook, worker) for gid, index in
                         sorted(placed.items(), key=lambda p: p[1])]
    return out


CODE = "_code"          # the visible test <grade_id>'s code: the locked cell <grade_id>_code above it


def _tests_with_their_code(expected: dict) -> dict[str, str]:
    """grade_id -> the text to run for each visible test: the course's code cells of its notebook up to its
    own (the first defines what the others share), then the test's call."""
    tests, code = {}, []
    for gid, cell in expected.items():
        if gid.endswith(CODE) and gid[:-len(CODE)] in expected:
            code.append(cell.text)
        elif cell.meta[0] and gid not in RUBRIC:
            tests[gid] = "\n\n".join([*code, cell.text])
    return tests


def _result(grade_id: str, index: int, notebook: str, worker) -> VisibleResult:
    """Failed when the worker noted this cell's error (``Cell <index> of <notebook>.ipynb raised ...``) or
    the cell stopped the worker; passed when the last worker ran it without error; else it never ran."""
    prefix = f"Cell {index} of {notebook}.ipynb raised "
    failed = next((n[len(prefix):] for n in worker.notes if n.startswith(prefix)), None)
    if failed is not None:                      # the notebook's AdviceFirst: its message alone, as Jupyter shows it
        return VisibleResult(grade_id, False, failed.removeprefix("AdviceFirst: "))
    position = next(i for i, c in enumerate(worker.cells) if c.index == index)
    if position in worker.skip:
        return VisibleResult(grade_id, False, "this cell stopped the notebook (it ran too long or crashed)")
    if worker.ran > position:
        return VisibleResult(grade_id, True)
    return VisibleResult(grade_id, None, "the notebook stopped before this cell (see the notes)")
