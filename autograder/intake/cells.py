"""A parsed notebook's cells, checked field by field before anything uses them.

A submission's JSON can hold any type anywhere: cells that are not a list,
a source that is a dict, metadata that is a string, points that are a string,
NaN or 1e308, a grade_id that is a number. Each field used is checked for type
and shape here; a surprise is described (one line per notebook) and the cell
is skipped or its nbgrader settings ignored, never passed on.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..inert import shown
from .model import Intake

MAX_CELLS = 5_000
MAX_TEXT_CHARS = 1 << 20            # of a markdown or raw cell kept (a real one holds a few thousand); the rest
                                    # is dropped as soon as it is read, never copied through the comparisons
MAX_CODE_CHARS = 4 << 20            # of code taken from one notebook (a real one holds a few thousand): a cell
                                    # that would take it past this is not run, so no comparison, line count,
                                    # autograded notebook or worker ever handles more (a 40 MB cell cost minutes; 4 MiB keeps a cell of megabytes running, tests/sandbox/test_big_cell.py)
MAX_POINTS = 1_000_000
MAX_GRADE_ID = 200
_FLAGS = ("grade", "solution", "locked")


@dataclass(frozen=True)
class Nbgrader:
    """A cell's nbgrader settings; ``valid`` is False when any field had the wrong type or shape."""
    grade_id: str | None
    grade: bool = False
    solution: bool = False
    locked: bool = False
    points: float | None = None
    valid: bool = True
    checksum: str | None = None       # what nbgrader's generate_assignment wrote (``intake.compare.released_so``)

    @property
    def flags(self) -> tuple:
        return (self.grade, self.solution, self.locked, self.points)


@dataclass(frozen=True)
class Cell:
    index: int
    cell_type: str
    source: str
    nbgrader: Nbgrader | None


def normalise(text: str) -> str:
    """A cell's text as compared: trailing spaces and surrounding blank lines do not count."""
    return "\n".join(line.rstrip() for line in str(text).strip().splitlines())


def cells_of(nb: dict, name: str, intake: Intake) -> list[Cell]:
    """The notebook's checked cells; one damage line names what was malformed."""
    raw = nb.get("cells")
    if not isinstance(raw, list):
        intake.damage(f"{name}.ipynb is damaged: its 'cells' is {_what(raw)}, not a list; nothing in it "
                      "was graded.")
        return []
    faults: list[str] = []
    if len(raw) > MAX_CELLS:
        faults.append(f"it has {len(raw)} cells (only the first {MAX_CELLS} were read)")
    cells = _within_code_budget([c for i, item in enumerate(raw[:MAX_CELLS]) if (c := _cell(i, item, faults))
                                 is not None], faults)
    if faults:
        more = f" and {len(faults) - 3} more" if len(faults) > 3 else ""
        intake.damage(f"{name}.ipynb is damaged: {'; '.join(faults[:3])}{more}. Those cells were skipped "
                      "or their nbgrader settings ignored; the rest was graded.")
    return cells


def _within_code_budget(cells: list[Cell], faults: list[str]) -> list[Cell]:
    """``cells`` with the source of every code cell that would take the notebook's code past ``MAX_CODE_CHARS``
    emptied (its place and nbgrader settings kept), each named in ``faults``."""
    out, left = [], MAX_CODE_CHARS
    for cell in cells:
        if cell.cell_type == "code" and len(cell.source) > left:
            faults.append(f"cell {cell.index + 1} holds {len(cell.source):,} characters of code, past the "
                          f"notebook's limit of {MAX_CODE_CHARS:,} (a real one holds a few thousand); it was not run")
            cell = replace(cell, source="")
        left -= len(cell.source) if cell.cell_type == "code" else 0
        out.append(cell)
    return out


def _cell(index: int, item, faults: list[str]) -> Cell | None:
    where = f"cell {index + 1}"
    if not isinstance(item, dict):
        faults.append(f"{where} is {_what(item)}, not an object")
        return None
    cell_type = item.get("cell_type")
    if not isinstance(cell_type, str):
        faults.append(f"{where} has a cell_type that is {_what(cell_type)}")
        return None
    source = _source(item.get("source", ""))
    if source is None:
        faults.append(f"{where}'s source is {_what(item.get('source'))}, not text")
        return None
    if cell_type != "code" and len(source) > MAX_TEXT_CHARS:
        faults.append(f"{where} holds {len(source):,} characters of text; only the first {MAX_TEXT_CHARS:,} were kept")
        source = source[:MAX_TEXT_CHARS]
    return Cell(index, cell_type, source, _settings(item.get("metadata", {}), where, faults))


def _source(value) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        try:
            return "".join(value)                          # TypeError unless every line is text
        except TypeError:
            return None
    return None


def _settings(meta, where: str, faults: list[str]) -> Nbgrader | None:
    if not isinstance(meta, dict):
        faults.append(f"{where}'s metadata is {_what(meta)}, not an object")
        return None
    nbg = meta.get("nbgrader")
    if nbg is None:
        return None
    if not isinstance(nbg, dict):
        faults.append(f"{where}'s nbgrader metadata is {_what(nbg)}")
        return Nbgrader(None, valid=False)
    problems = [f"{where}'s nbgrader {p}" for p in _setting_problems(nbg)]
    faults += problems
    gid = nbg.get("grade_id")
    gid = gid if isinstance(gid, str) and 0 < len(gid) <= MAX_GRADE_ID else None
    flags = {k: nbg.get(k) is True for k in _FLAGS}
    points = nbg.get("points")
    points = float(points) if _is_points(points) else None
    checksum = nbg.get("checksum")
    checksum = checksum if isinstance(checksum, str) and len(checksum) == 32 else None
    return Nbgrader(gid, **flags, points=points, valid=not problems, checksum=checksum)


def _setting_problems(nbg: dict) -> list[str]:
    out = []
    gid = nbg.get("grade_id")
    if gid is not None and not (isinstance(gid, str) and 0 < len(gid) <= MAX_GRADE_ID):
        out.append(f"grade_id is {_what(gid)}")
    out += [f"'{k}' is {_what(nbg[k])}, not true or false" for k in _FLAGS
            if k in nbg and not isinstance(nbg[k], bool)]
    if nbg.get("points") is not None and not _is_points(nbg["points"]):
        out.append(f"points is {_what(nbg['points'])}, not a number from 0 to {MAX_POINTS}")
    return out


def _is_points(value) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and 0 <= value <= MAX_POINTS)


def _what(value) -> str:
    """A short, inert description of a JSON value for a message."""
    if isinstance(value, str):
        return f"the text {shown(value, 40)}"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10 ** 24:
        return "a huge number"
    if isinstance(value, (bool, int, float)) or value is None:
        return repr(value)[:24]
    return {"dict": "an object", "list": "a list"}.get(type(value).__name__, type(value).__name__)
