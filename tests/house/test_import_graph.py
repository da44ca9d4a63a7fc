"""The package's imports form no circle, counting imports inside functions (read with ``ast``).

An edge is what an import statement names: ``from .x import y`` imports ``x`` (and ``x.y`` when
that is a module); ``from . import y`` imports the module ``y`` when there is one, else the package
itself. A package's own ``__init__`` is not counted as imported by its members implicitly (Python
loads it first, but it runs before them and names nothing of theirs unless it imports them).
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "autograder"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py") if "course_files" not in p.parts}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            subs = {f"{target}.{a.name}" for a in node.names} & known
            found |= subs if subs and not node.module else subs | {target}
    return {m for m in found if m in known and m != name}


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, set(modules)) for name, path in modules.items()}


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of the graph (its modules in order, the first repeated at the end), or None."""
    state: dict[str, int] = {}          # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (circle := visit(nxt)):
                return circle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (circle := visit(start)):
            return circle
    return None


def test_the_package_has_no_import_circle():
    circle = find_circle(import_graph())
    assert circle is None, "import circle: " + " -> ".join(circle)


def test_the_walker_finds_a_circle_through_an_import_inside_a_function():
    """The check above can fail: a graph with a circle is found, one without is not."""
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    graph = import_graph()
    assert "autograder.grading.rubric" in graph["autograder.grading.namespace"]          # a top-level import is seen
    assert "autograder.run.check" in graph["autograder.__main__"]      # so is one inside a function


def test_the_assignments_shape_and_the_catalogues_entry_are_leaves():
    """What records, intake and the sample class need of the assignment (assignment.py) imports nothing of
    ours, so importing it never pulls in the checks; a catalogue entry imports only the pipeline it turns."""
    graph = import_graph()
    assert graph["autograder.assignment"] == set()
    assert graph["autograder.misconceptions.entry"] <= {"autograder.misconceptions.pipeline"}
    assert "autograder.grading.rubric" not in graph["autograder.records"] | graph["autograder.grading.student"]
