"""The course's own notebooks, read in one place: bytes -> JSON (a byte-order mark is fine), the
nbgrader metadata of a cell, and the nbgrader cells of an assignment's source notebooks.

Intake (``intake/expected.py``), the fingerprint and the gradebook writer all read the course's
notebooks through this module, so they agree on what a notebook holds: a source notebook that one
of them can read, all of them can.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path


BEGIN_HIDDEN, END_HIDDEN = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"     # nbgrader's default delimiters


class CourseError(ValueError):
    """The course itself cannot grade this assignment (one clear error, before any student)."""


def read_notebook(path: Path) -> dict:
    """The JSON of one of the course's notebooks (a byte-order mark is skipped); CourseError, naming the
    file and what to do, when it cannot be read or is not a notebook."""
    try:
        nb = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except (OSError, ValueError) as exc:
        raise CourseError(f"the course's notebook {path} could not be read ({type(exc).__name__}: "
                          f"{str(exc)[:120]}); fix it before grading") from None
    if not isinstance(nb, dict):
        raise CourseError(f"the course's notebook {path} is not a notebook; fix it before grading")
    return nb


def nbgrader_meta(cell) -> dict:
    """A cell's ``metadata.nbgrader`` (empty when the cell, its metadata or that entry is not an object)."""
    meta = cell.get("metadata") if isinstance(cell, dict) else None
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    return meta if isinstance(meta, dict) else {}


def source_cells(source_dir: Path) -> dict[str, tuple[dict, ...]]:
    """notebook -> its cells with nbgrader metadata, in order, for every source notebook of ``source_dir``
    (one without such cells maps to none); read once while the files are unchanged."""
    paths = sorted(Path(source_dir).glob("*.ipynb"))
    return _source_cells(tuple((p, p.stat().st_mtime_ns, p.stat().st_size) for p in paths))


@functools.lru_cache(maxsize=8)
def _source_cells(versions: tuple) -> dict[str, tuple[dict, ...]]:
    found = {}
    for path, _, _ in versions:
        cells = read_notebook(path).get("cells")
        if not isinstance(cells, list):
            raise CourseError(f"the course's notebook {path} could not be read (it has no list of cells); "
                              "fix it before grading")
        found[path.stem] = tuple(cell for cell in cells if nbgrader_meta(cell))
    return found


def cell_source(cell: dict) -> str:
    """A cell's source as one string (nbformat stores it as a string or a list of lines)."""
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def grade_cells(source_dir: Path) -> dict[str, dict[str, dict]]:
    """notebook -> grade_id -> {"points", "source"} for the grade cells of the course's source notebooks."""
    out: dict[str, dict[str, dict]] = {}
    for notebook, cells in source_cells(source_dir).items():
        try:
            out[notebook] = {nbgrader_meta(c)["grade_id"]: {"points": nbgrader_meta(c).get("points"),
                                                           "source": cell_source(c)}
                             for c in cells if nbgrader_meta(c).get("grade") and nbgrader_meta(c).get("grade_id")}
        except TypeError as exc:
            raise CourseError(f"the course's notebook {Path(source_dir) / notebook}.ipynb could not be read "
                              f"(TypeError: {str(exc)[:120]}); fix it before grading") from None
    return out


def handout(course: Path, assignment: str, notebook: str) -> dict:
    """The notebook as handed to students: the release's, else the source's with hidden tests and solutions
    taken out (so reference code never reaches an autograded notebook)."""
    release = Path(course) / "release" / assignment / f"{notebook}.ipynb"
    if release.exists():
        return read_notebook(release)
    nb = read_notebook(Path(course) / "source" / assignment / f"{notebook}.ipynb")
    for cell in nb["cells"]:
        if nbgrader_meta(cell).get("solution"):
            cell["source"] = "# YOUR CODE HERE\nraise NotImplementedError()" if cell["cell_type"] == "code" else ""
        cell["source"] = strip_hidden_tests(cell_source(cell))
    return nb


def strip_hidden_tests(source: str) -> str:
    """``source`` without its hidden-test regions, line for line as nbgrader's ClearHiddenTests does."""
    kept, hidden = [], False
    for line in source.split("\n"):
        if BEGIN_HIDDEN in line:
            hidden = True
        elif END_HIDDEN in line:
            hidden = False
        elif not hidden:
            kept.append(line)
    return "\n".join(kept)
