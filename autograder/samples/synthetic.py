"""Make filled-in student notebooks from the release: the reference answers, or variants of them.

Used by the tests, the sample class of ``make demo`` and the benchmarks. A
variant is a mapping function name -> code; the code is appended to the
solution cell that defines that function, so a later ``def`` replaces the
reference one exactly as a student's edit would.
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat

from ..course.notebooks import nbgrader_meta
from ..inert import visible_bytes

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
_DEF = re.compile(r"^def (\w+)\(", re.M)


def strip_markers(source: str) -> str:
    return "\n".join(line for line in source.splitlines() if line.strip() not in (BEGIN, END))


def reference_answers(source_dir: Path) -> dict[str, dict[str, str]]:
    """notebook name -> {solution grade_id: the instructor's code without markers}."""
    answers = {}
    for path in sorted(Path(source_dir).glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        answers[path.stem] = {nbgrader_meta(c)["grade_id"]: strip_markers(c.source)
                              for c in nb.cells if nbgrader_meta(c).get("solution")}
    return answers


def filled_answers(answers: dict[str, str], overrides: dict[str, str] | None = None) -> dict[str, str]:
    """solution grade_id -> the reference code with each override appended to the cell defining its function."""
    left = dict(overrides or {})
    return {g: "\n\n".join([code, *[left.pop(n) for n in _DEF.findall(code) if n in left]])
            for g, code in answers.items()}


def fill_notebook(release_nb, answers: dict[str, str], overrides: dict[str, str] | None = None):
    """A copy of ``release_nb`` with solution cells filled; overrides appended where their function lives."""
    nb = nbformat.from_dict(release_nb)
    filled = filled_answers(answers, overrides)
    for cell in nb.cells:
        grade_id = nbgrader_meta(cell).get("grade_id")
        if nbgrader_meta(cell).get("solution") and grade_id in filled:
            cell.source = filled[grade_id]
    return nb


def write_submission(release_dir: Path, source_dir: Path, dest: Path,
                     overrides: dict[str, str] | None = None, skip: tuple[str, ...] = (),
                     extra_cells: dict[str, list[str]] | None = None,
                     per_notebook: dict[str, dict[str, str]] | None = None) -> Path:
    """Fill every release notebook into ``dest`` (nbgrader layout: submitted/<student>/<assignment>).

    ``overrides`` apply in every notebook that defines the function; ``per_notebook`` maps a notebook
    name to overrides for that notebook only; ``extra_cells`` maps a notebook name to code cells the
    student added at its end. Each student's files differ in their bytes (as real saves do: the
    student is named in the notebook's metadata), so the grader's check for byte-identical copies
    between classmates does not flag samples.
    """
    answers = reference_answers(source_dir)
    dest.mkdir(parents=True, exist_ok=True)
    for path in sorted(Path(release_dir).glob("*.ipynb")):
        if path.stem in skip:
            continue
        mine = {**(overrides or {}), **(per_notebook or {}).get(path.stem, {})}
        nb = fill_notebook(nbformat.read(path, as_version=4), answers[path.stem], mine)
        nb.cells += [nbformat.v4.new_code_cell(code) for code in (extra_cells or {}).get(path.stem, [])]
        nb.metadata["sample_submission"] = {"student": _printable(dest.parent.name)}
        nbformat.write(nb, dest / path.name)
    return dest


def _printable(name: str) -> str:
    """A folder name as text JSON can hold (bytes that are not UTF-8 shown as escapes)."""
    return visible_bytes(name)
