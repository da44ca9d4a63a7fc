"""Keep the student's code cells; compare the notebook's test and read-only cells with the course's.

Test cells are never taken from the submission: the grader runs its own
checks, at the place each grade cell stands (noted here, as nbgrader runs
a notebook's cells in order). Edited, deleted or re-pointed cells are damage
(one line per kind of damage per notebook); a notebook whose nbgrader metadata an editor removed
altogether gets one line, and its cells are matched by their text.
"""
from __future__ import annotations

import hashlib

from ..inert import shown
from .cells import Cell, Nbgrader, normalise
from .expected import TestCell
from .model import CodeCell, GradeCell, Intake


def collect_cells(cells: list[Cell], name: str, expected: dict[str, TestCell], intake: Intake,
                  salvaged: bool = False) -> None:
    """Student code cells in order; test and read-only cells compared with the course's versions."""
    locked = {normalise(t.text): gid for gid, t in expected.items() if not t.meta[1]}
    code = [c for c in cells if c.cell_type == "code"]
    if not salvaged and expected and code and not any(c.nbgrader and c.nbgrader.grade_id for c in code):
        _stripped_metadata(code, name, expected, locked, intake)
        return
    seen, edited, changed, relabelled = set(), [], [], []
    for cell in code:
        nbg = cell.nbgrader
        gid = nbg.grade_id if nbg else None
        if gid not in expected and locked.get(normalise(cell.source)) not in (None, *seen):
            found = locked[normalise(cell.source)]           # a locked cell's text, its metadata gone or changed
            seen.add(found)
            relabelled.append((found, gid))
            _place(cell, name, found, expected[found], intake)
            continue
        if gid in expected:
            seen.add(gid)
            want = expected[gid]
            if nbg.valid and nbg.flags != want.meta and not released_so(nbg, want):
                changed.append(gid)
            if not want.meta[1]:
                if normalise(cell.source) != normalise(want.text):
                    edited.append(gid)
                if want.meta[2]:
                    _place(cell, name, gid, want, intake)
                    continue                                   # test or read-only cell: never run
        elif nbg and nbg.grade and not nbg.solution:
            intake.damage(f"{name}.ipynb has an extra grade cell {shown(gid or '?', 60)} that is not in the "
                          "assignment; it was not run.", suspicion=True)
            continue
        intake.cells.append(CodeCell(name, cell.index, cell.source))
    _report(name, expected, seen, edited, changed, salvaged, intake)
    _relabelled(name, relabelled, intake)


def _relabelled(name: str, relabelled: list[tuple[str, str | None]], intake: Intake) -> None:
    """Locked cells found by their text whose grade_id is gone or another: said so, not "deleted". Lost
    metadata (an editor strips it) is a note; a grade_id changed to another is a changed setting (review)."""
    lost = sorted(found for found, gid in relabelled if not gid)
    if lost:
        intake.note(f"{name}.ipynb: the locked {_cells_named(lost)} lost {'their' if len(lost) > 1 else 'its'} "
                    "nbgrader metadata (the grade_id is no longer found); recognised by the text and graded as usual.")
    for found, gid in sorted((f, g) for f, g in relabelled if g):
        intake.damage(f"{name}.ipynb: the grade_id of the locked cell {shown(found, 60)} was changed to "
                      f"{shown(gid, 60)}; the cell was recognised by its text and the assignment's tests were run.",
                      suspicion=True)


def released_so(nbg: Nbgrader, want: TestCell) -> bool:
    """Whether a test cell whose points alone differ from the course's was handed out so: the instructor
    re-weighted it after this copy was released (every student's copy then differs, and none is to blame).
    nbgrader's generate_assignment writes each cell's checksum over its text, kind, flags, id and points; a
    copy whose checksum is that of the released cell at the copy's own points came from a release, while a
    student who edits the points (damaged-points-inflated) leaves the checksum of the points before."""
    grade, solution, locked, points = want.meta
    if (nbg.grade, nbg.solution, nbg.locked) != (grade, solution, locked) or nbg.points is None or not grade:
        return False
    return nbg.checksum == nbgrader_checksum(want.text, "code", nbg.grade_id, grade, solution, locked, nbg.points)


def nbgrader_checksum(source: str, cell_type: str, grade_id: str, grade: bool, solution: bool, locked: bool,
                      points: float | None) -> str:
    """nbgrader's ``utils.compute_checksum`` of a cell (its grade cells are locked unless they are answers),
    without importing nbgrader into a grading process; tests/intake/test_reweighted.py holds it to nbgrader's."""
    m = hashlib.md5()
    for part in (source, cell_type, str(grade), str(solution), str(not solution and (grade or locked)), grade_id):
        m.update(part.encode("utf-8"))
    if grade:
        m.update(str(float(points or 0)).encode("utf-8"))
    return m.hexdigest()


def _place(cell: Cell, name: str, gid: str, want: TestCell, intake: Intake) -> None:
    """Note where a grade cell stands (its first copy): nbgrader runs its tests at that point."""
    if want.meta[0] and not any(g.notebook == name and g.grade_id == gid for g in intake.grade_cells):
        intake.grade_cells.append(GradeCell(name, cell.index, gid))


# Fewer lines of a student's own than this, and two identical notebooks are not evidence of copying:
# the obvious one-line answers of ex3, saved after Restart & Run All, are byte for byte the same.
MIN_COPY_LINES = 8


def work_lines(cells: list[CodeCell], given: frozenset, enough: int | None = None) -> int:
    """How many lines the student wrote: non-blank, non-comment lines of changed cells that no cell
    the release gave them holds; counting stops at ``enough`` (a cell of megabytes is not read to its end
    to learn that it holds more than 8)."""
    given_lines = {line.strip() for text in given for line in text.splitlines()}
    count = 0
    for cell in cells:
        if normalise(cell.source) in given:
            continue
        for line in map(str.strip, cell.source.splitlines()):
            if line and line[0] != "#" and line not in given_lines:
                count += 1
                if count == enough:
                    return count
    return count


def _report(name, expected, seen, edited, changed, salvaged, intake) -> None:
    if changed:
        intake.damage(f"{name}.ipynb: the nbgrader settings of {_cells_named(changed)} were changed "
                      f"(points or grade flags); the assignment's settings were used.", suspicion=True)
    if edited:
        intake.damage(f"{name}.ipynb: the locked {_cells_named(edited)} {_was(edited)} edited; the grader ran "
                      "its own tests instead.", suspicion=True)
    if salvaged:
        return                                                 # cell metadata was lost with the JSON
    deleted = sorted(set(expected) - seen)
    if deleted:
        kinds = " and ".join(sorted({_kind(expected[g]) for g in deleted}))
        intake.damage(f"{name}.ipynb: the {kinds} {_cells_named(deleted)} {_was(deleted)} deleted.")


def _stripped_metadata(code: list[Cell], name: str, expected: dict[str, TestCell], locked: dict,
                       intake: Intake) -> None:
    """No cell carries nbgrader metadata: match test cells by text, report once for the notebook."""
    found = set()
    for cell in code:
        gid = locked.get(normalise(cell.source))
        if gid is not None and expected[gid].meta[2]:
            found.add(gid)
            _place(cell, name, gid, expected[gid], intake)
            continue
        intake.cells.append(CodeCell(name, cell.index, cell.source))
    missing = sorted(g for g, t in expected.items() if not t.meta[1] and t.meta[2] and g not in found)
    if missing:
        intake.damage(f"{name}.ipynb has lost its nbgrader cell metadata (an editor removed it) and the "
                      f"locked {_cells_named(missing)} {_was(missing)} not found; the grader ran its own "
                      "tests on the code.")
    else:
        intake.note(f"{name}.ipynb has lost its nbgrader cell metadata (an editor removed it); its cells "
                    "were recognised by their text and graded as usual.")


def _kind(cell: TestCell) -> str:
    return "test" if cell.meta[0] else "exercise" if cell.meta[1] else "read-only"


def _cells_named(ids: list[str]) -> str:
    names = ", ".join(f"'{g}'" for g in ids)
    return f"cell {names}" if len(ids) == 1 else f"cells {names}"


def _was(ids: list[str]) -> str:
    return "was" if len(ids) == 1 else "were"
