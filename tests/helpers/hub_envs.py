"""The two Python environments of the documented Hub (docs/how-to/jupyterhub.md), built offline for the Hub tests.

- the students' (``/opt/student`` in the docs): what their servers need, JupyterHub's single-user server,
  JupyterLab, nbgrader's Assignment List, numpy, matplotlib and ipywidgets, and nothing of this package: no
  ``solutions``, no ``autograder``, no course files;
- the grader's (``/opt/grader``): this package as its wheel installs it (its course files copied in, as from
  PyPI), with its dependencies and the single-user server the instructor's own server runs; its folder is
  readable by the instructor's group only (0750), so no student account can open anything below it.

``pip install`` would download them; here each is made from this virtual environment's installed
distributions, the closure of the requirements named: a fresh venv (``python -m venv --without-pip``), each
distribution's files (its RECORD) hard-linked into it, its console scripts written afresh for the new
interpreter. Nothing links back into this checkout, so the Hub test can close the checkout to every account.
"""
from __future__ import annotations

import importlib.metadata as md
import os
import shutil
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

STUDENT_PACKAGES = ("jupyterhub", "jupyterlab", "nbgrader", "numpy", "matplotlib", "ipywidgets")
GRADER_EXTRAS = ("jupyterhub", "jupyterlab")       # beside the package's own requirements: the instructor's server
THIS_PACKAGE = "attention-course"
SCRIPT = """#!{python}
import sys
from importlib.metadata import EntryPoint
sys.exit(EntryPoint({name!r}, {value!r}, "console_scripts").load()())
"""


def closure(wanted: list[tuple[str, frozenset]]) -> dict[str, md.Distribution]:
    """Every installed distribution the requirements ``wanted`` (name, extras) need, by canonical name."""
    found: dict[str, tuple[md.Distribution, frozenset]] = {}
    todo = list(wanted)
    while todo:
        name, extras = todo.pop()
        key = canonicalize_name(name)
        if key in found and extras <= found[key][1]:
            continue
        dist = md.distribution(name)
        extras = extras | (found[key][1] if key in found else frozenset())
        found[key] = (dist, extras)
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in (extras or {""})):
                todo.append((req.name, frozenset(req.extras)))
    return {key: dist for key, (dist, _) in found.items()}


def make_env(prefix: Path, dists: dict[str, md.Distribution]) -> Path:
    """A venv at ``prefix`` holding ``dists`` (hard-linked files, fresh scripts); returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True, timeout=300)
    python = prefix / "bin" / "python"
    for dist in dists.values():
        _link_files(dist, prefix)
        for entry in dist.entry_points.select(group="console_scripts"):
            script = prefix / "bin" / entry.name
            script.write_text(SCRIPT.format(python=python, name=entry.name, value=entry.value))
            script.chmod(0o755)
    return python


def _link_files(dist: md.Distribution, prefix: Path) -> None:
    """Each file of the distribution's RECORD at the same place below ``prefix`` as below this venv; its
    scripts (bin/) are written afresh instead, they name this venv's interpreter."""
    here = Path(sys.prefix)
    for file in dist.files or []:
        source = Path(os.path.normpath(dist.locate_file(file)))
        try:
            relative = source.relative_to(here)
        except ValueError:
            continue
        if relative.parts[0] == "bin" or not source.is_file():
            continue
        target = prefix / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            try:
                os.link(source, target)
            except OSError:
                shutil.copy2(source, target)


def student_env(prefix: Path) -> Path:
    """The students' environment; returns its python. Refuses to hold this package."""
    dists = closure([(name, frozenset()) for name in STUDENT_PACKAGES])
    assert THIS_PACKAGE not in dists, "the students' environment would hold the grader's package"
    return make_env(prefix, dists)


def grader_env(prefix: Path, wheel: Path, group: str) -> Path:
    """The grader's environment, this package installed from ``wheel``, readable by ``group`` only; its python."""
    requires = [(r.name, frozenset(r.extras)) for r in map(Requirement, md.distribution(THIS_PACKAGE).requires or [])
                if r.marker is None or r.marker.evaluate({"extra": "postgres"})]
    dists = closure([*requires, *((name, frozenset()) for name in GRADER_EXTRAS)])
    dists.pop(THIS_PACKAGE, None)
    python = make_env(prefix, dists)
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                           "--no-index", str(wheel)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"installing the wheel failed: {done.stderr[-2000:]}"
    shutil.chown(prefix, "root", group)
    prefix.chmod(0o750)
    return python
