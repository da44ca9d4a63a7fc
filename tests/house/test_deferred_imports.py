"""Every import of the project's own code inside a function says why it is not at the top (issue 36, item 6):
a comment on its line or on the line above, or a module docstring that says why its functions import what they
run (``autograder/__main__.py``: a command loads only what it uses). Most such imports were habit, not need:
moved to the top, they showed that a reason, where one is kept, is true (numpy loaded only when a job is
graded, a slow import after ``die_with_parent``)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OURS = ("autograder", "solutions")


def _ours(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        return bool(node.level) or (node.module or "").split(".")[0] in OURS
    return isinstance(node, ast.Import) and any(a.name.split(".")[0] in OURS for a in node.names)


def unexplained(path: Path, root: Path = ROOT) -> list[str]:
    """``path:line: statement`` for each in-function import of ours that says no reason."""
    text = path.read_text(encoding="utf-8")
    tree, lines = ast.parse(text), text.splitlines()
    doc = ast.get_docstring(tree) or ""
    if "import" in doc and "inside" in doc and "function" in doc:
        return []                                    # the module says why, once
    found = set()
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(function):
                above = lines[node.lineno - 2].strip() if _ours(node) and node.lineno > 1 else ""
                if _ours(node) and "#" not in lines[node.lineno - 1] and not above.startswith("#"):
                    found.add(f"{path.relative_to(root)}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    return sorted(found)


def test_every_import_inside_a_function_says_why():
    files = [p for package in OURS for p in (ROOT / package).rglob("*.py") if "course_files" not in p.parts]
    found = [line for path in sorted(files) for line in unexplained(path)]
    assert not found, "move these to the top, or say why in a few words:\n" + "\n".join(found)


def test_the_check_sees_an_unexplained_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""A module."""\n\ndef f():\n    from .x import y\n    return y\n\n\ndef g():\n'
                      '    from .x import z  # (numpy: only when g runs)\n    return z\n')
    assert [line.split(": ", 1)[1] for line in unexplained(module, tmp_path)] == ["from .x import y"]

