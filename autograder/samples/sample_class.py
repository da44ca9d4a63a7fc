"""The bundled sample class for `make demo`: submissions named by what they show.

One student per fixture in ``tests/fixtures/impl/`` (the one corpus of student code: correct
but unusual ones, one per misconception, compound and uncatalogued mistakes, unfinished work),
read as text through ``autograder.course.resources`` so an installed wheel builds the same class; plus
the instructor's answers, damaged notebooks and hostile code (attacks of ``tests/adversarial/``, read
as text the same way; the damaged notebooks stay here, since the corpus's damage is code and the grader
never runs corpus code). Each submission is the release filled with the instructor's answers, with
the fixture's functions appended to the cells where they live, then, for the damaged ones, broken
on purpose.
"""
from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import nbformat

from ..course import resources
from ..course.notebooks import nbgrader_meta
from ..course.settings import DEFAULT_ASSIGNMENT
from ..assignment import FUNCTIONS
from .synthetic import write_submission

EXERCISE_FUNCTIONS = frozenset(name for names in FUNCTIONS.values() for name in names)


def overrides_from_source(source: str) -> dict[str, str]:
    """A fixture's code as a student would have typed it: exercise function -> its code.

    Only the fixture's own top-level ``def``s of exercise functions (with their decorators) are taken
    (the rest of the submission is the instructor's answers); its imports other than numpy and the
    fixture package's own come first in each function's code, since each notebook runs on its own.
    """
    tree = ast.parse(source)
    imports = [ast.get_source_segment(source, node) for node in tree.body
               if isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom) and not node.level)]
    header = "".join(f"{line}\n" for line in imports if line != "import numpy as np")
    return {node.name: f"{header}{_with_decorators(source, node)}\n" for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name in EXERCISE_FUNCTIONS}


def _with_decorators(source: str, node: ast.FunctionDef) -> str:
    """The function's code from its first decorator (``@lru_cache``) on."""
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    return "\n".join(source.splitlines()[first - 1:node.end_lineno])


def fixture_students(sources: dict[str, str] | None = None) -> dict[str, dict]:
    """student id -> overrides, one student per fixture (``no_scaling`` -> ``no-scaling``)."""
    sources = resources.fixture_sources() if sources is None else sources
    return {name.replace("_", "-"): overrides_from_source(code) for name, code in sorted(sources.items())
            if name != "correct_plain"}


# hostile student -> the attack of the corpus (tests/adversarial/) whose code it hands in
HOSTILE_ATTACKS = {"hostile-infinite-loop": "disrupt_loop_in_causal_mask_cell",
                   "hostile-reads-source": "disrupt_glob_source_notebooks_in_softmax_cell",
                   "hostile-fork-bomb": "disrupt_fork_bomb_in_cross_attention_cell",
                   "hostile-exits": "disrupt_exit_in_crossover_length_cell"}


def attack_override(source: str) -> dict[str, str]:
    """An attack module's ``{TARGET: CODE}``, read with ``ast.literal_eval`` (never imported or run)."""
    values = {node.targets[0].id: ast.literal_eval(node.value) for node in ast.parse(source).body
              if isinstance(node, ast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Name) and node.targets[0].id in ("TARGET", "CODE")}
    if values.get("TARGET") not in EXERCISE_FUNCTIONS or not isinstance(values.get("CODE"), str):
        raise ValueError(f"an attack for the sample class needs TARGET (an exercise function) and CODE: {values}")
    return {values["TARGET"]: values["CODE"].lstrip("\n")}


def hostile_students(sources: dict[str, str] | None = None) -> dict[str, dict]:
    """student id -> overrides, each the code of one attack of the corpus."""
    sources = resources.attack_sources() if sources is None else sources
    return {student: attack_override(sources[attack]) for student, attack in HOSTILE_ATTACKS.items()}


def _damage_missing(folder: Path) -> None:
    (folder / "ex3_memory.ipynb").unlink()


def _damage_edited_tests(folder: Path) -> None:
    path = folder / "ex2_causal_mask.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if nbgrader_meta(cell).get("grade_id") == "ex2_causal_visible":
            cell.source = "print('all tests passed')"
    nbformat.write(nb, path)


def _damage_bad_json(folder: Path) -> None:
    path = folder / "ex4_cross_attention.ipynb"
    path.write_text(path.read_text()[:-300])


def _damage_points(folder: Path) -> None:
    path = folder / "ex1_attention.ipynb"
    data = json.loads(path.read_text())
    for cell in data["cells"]:
        if nbgrader_meta(cell).get("grade_id") == "ex1_attention":
            nbgrader_meta(cell)["points"] = 500
    path.write_text(json.dumps(data))


DAMAGED = {"damaged-missing-notebook": _damage_missing, "damaged-edited-tests": _damage_edited_tests,
           "damaged-invalid-json": _damage_bad_json, "damaged-points-inflated": _damage_points}


# the instructor's answers as they are, four times; the mistakes most students make, a second time
# each (a realistic class repeats itself)
REFERENCE = ("correct-1", "correct-2", "correct-3", "correct-4")
REPEATS = ("no-scaling", "mask-after-softmax", "mask-missing", "scale-by-dk")


def students(sources: dict[str, str] | None = None) -> dict[str, dict]:
    """student id -> overrides (damaged ones use the reference answers, then get broken)."""
    from_fixtures = fixture_students(sources)
    return {**{k: {} for k in REFERENCE}, **from_fixtures, **{f"{k}-2": from_fixtures[k] for k in REPEATS if k in from_fixtures},
            **hostile_students(), **{k: {} for k in DAMAGED}}


def makeup() -> str:
    """What the sample class holds, counted from the lists that build it (`make demo` says it before grading)."""
    fixtures, repeats = fixture_students(), [k for k in REPEATS if k in fixture_students()]
    parts = [(len(fixtures), "one per fixture of the corpus of student code"), (len(REFERENCE), "the instructor's "
             "answers"), (len(repeats), "common mistakes a second time"), (len(HOSTILE_ATTACKS), "hostile"),
             (len(DAMAGED), "damaged")]
    return (f"{sum(n for n, _ in parts)} submissions ({', '.join(f'{n} {what}' for n, what in parts)})")


def lay_out(course: Path, assignment: str = DEFAULT_ASSIGNMENT) -> list[str]:
    """Write every sample submission under ``course/submitted/<student>/<assignment>/``."""
    release, source = course / "release" / assignment, course / "source" / assignment
    root = course / "submitted"
    if root.exists():
        shutil.rmtree(root)
    for student, overrides in students().items():
        folder = write_submission(release, source, root / student / assignment, overrides)
        if student in DAMAGED:
            DAMAGED[student](folder)
    return sorted(students())
