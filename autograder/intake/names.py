"""Find each expected notebook in a submission folder, including copies a browser or Jupyter renamed.

A browser saves a second download as ``ex1_attention (1).ipynb``; Jupyter's
"Make a copy" gives ``ex1_attention-Copy1.ipynb``. When the expected name is
missing and exactly one such copy is present, it is graded, with a note that
names the file; when several are, the message lists them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..inert import shown

_RENAMED = re.compile(r"^(?P<stem>.+?)(?:\s*\(\d+\)|-Copy\d*|\s+-\s+Copy(?:\s*\(\d+\))?|\s+copy(?:\s*\d+)?)"
                      r"\.ipynb$", re.I)
_MAX_SHOWN = 5


@dataclass(frozen=True)
class Found:
    name: str                  # the expected notebook, without .ipynb
    file: str | None           # the file to read, None when there is none
    note: str | None = None    # a renamed copy was used
    problem: str | None = None # missing or ambiguous


def stem_of(file: str) -> str | None:
    """The notebook a file name stands for (``ex1 (1).ipynb`` -> ``ex1``), or None if not a notebook."""
    if not file.lower().endswith(".ipynb"):
        return None
    match = _RENAMED.match(file)
    return match.group("stem") if match else file[: -len(".ipynb")]


def notebook_for(file: str, names) -> str | None:
    """Which of the assignment's notebooks ``file`` stands for (renamed copies and case allowed)."""
    stem = (stem_of(file) or "").lower()
    return next((n for n in names if n.lower() == stem), None)


def find(name: str, files: list[str], names: tuple[str, ...] = ()) -> Found:
    """Where notebook ``name`` is among ``files``; ``names`` are all the assignment's notebooks."""
    want = f"{name}.ipynb"
    if want in files:
        return Found(name, want)
    copies = [f for f in files if (stem_of(f) or "").lower() == name.lower()]
    if len(copies) == 1:
        return Found(name, copies[0], note=f"{shown(copies[0])} was graded as {want} (it had been renamed, "
                                              f"by a browser or Jupyter); name it {want} next time.")
    if copies:
        return Found(name, None, problem=f"{want} is missing and there are {len(copies)} copies of it "
                     f"({_listed(copies)}); it was not graded. Keep one, named {want}.")
    others = [f for f in files if f.lower().endswith(".ipynb") and stem_of(f) not in names]
    seen = f"; the folder holds {_listed(others)}" if others else "; the folder holds no other notebook"
    return Found(name, None, problem=f"{want} is missing from the submission{seen}. Its functions could "
                 "not be graded.")


def _listed(files: list[str]) -> str:
    more = f" and {len(files) - _MAX_SHOWN} more" if len(files) > _MAX_SHOWN else ""
    return ", ".join(shown(f, 60) for f in files[:_MAX_SHOWN]) + more
