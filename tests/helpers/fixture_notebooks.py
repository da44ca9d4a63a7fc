"""A fixture as the notebooks a student would hand in, and its namespaces as nbgrader runs them.

The fixture's text becomes the functions a student typed (``sample_class.overrides_from_source``),
appended to the release's solution cells exactly as the sample class does; each notebook's
solution cells then run on their own, so a grade cell's checks call that notebook's functions.
"""
from __future__ import annotations

from functools import lru_cache

import nbformat
import numpy as np

from autograder.samples.sample_class import overrides_from_source
from autograder.samples.synthetic import fill_notebook, reference_answers
from conftest import RELEASE, SOURCE, TESTS


@lru_cache(maxsize=1)
def _answers() -> dict:
    return reference_answers(SOURCE)


def fixture_source(name: str) -> str:
    return (TESTS / "fixtures" / "impl" / f"{name}.py").read_text()


def notebook_namespaces(source: str) -> dict[str, dict]:
    """notebook name -> the namespace its solution cells leave, with the fixture's functions in place."""
    overrides = overrides_from_source(source)
    spaces = {}
    for path in sorted(RELEASE.glob("*.ipynb")):
        nb = fill_notebook(nbformat.read(path, as_version=4), _answers()[path.stem], overrides)
        ns: dict = {"np": np}
        for cell in nb.cells:
            if cell.cell_type == "code" and cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
                exec(cell.source, ns)                     # noqa: S102 - our own course and fixture code
        spaces[path.stem] = ns
    return spaces
