"""Build release/ from source/ with nbgrader's own generate_assignment.

The generation runs in a temporary copy of the course, so the instructor's
gradebook is not touched and the result depends only on source/ and
nbgrader_config.py.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from .nbgrader_cli import run_nbgrader
from .settings import CONFIG, choose_assignment, init_command


def generate_release(course: Path, dest: Path | None = None, assignment: str | None = None,
                     db_url: str | None = None) -> Path:
    """Write ``dest`` (default ``course/release/<assignment>``) from ``course/source/<assignment>``
    (default: the course's only assignment).

    ``db_url`` names the gradebook nbgrader records the assignment in (default: a throw-away one). The
    ``release`` command checks the points first (``grading.chapter.check_release_points``).
    """
    course = Path(course).resolve()
    assignment = choose_assignment(course, assignment)
    _require(course, assignment)
    dest = Path(dest) if dest else course / "release" / assignment
    with tempfile.TemporaryDirectory(prefix="release-") as tmp:
        work = Path(tmp)
        shutil.copy(course / "nbgrader_config.py", work / "nbgrader_config.py")
        shutil.copytree(course / "source" / assignment, work / "source" / assignment,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        run_nbgrader(["generate_assignment", assignment, "--force",
                      "--log-level=WARN", f"--CourseDirectory.root={work}",
                      f"--CourseDirectory.db_url={db_url or f'sqlite:///{work}/gradebook.db'}"],
                     work, "generate_assignment")
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(work / "release" / assignment, dest)
    return dest


def _require(course: Path, assignment: str) -> None:
    missing = [p for p in (CONFIG, f"source/{assignment}") if not (course / p).exists()]
    if missing:
        raise ValueError(f"{course} has no {' and no '.join(missing)}: nothing to release. Lay out "
                         f"this chapter with {init_command(course, merge=True)}")


def execute_sources(course: Path, assignment: str | None = None) -> list[Path]:
    """Re-run every source notebook in place so its stored outputs (the chapter's facts, the
    plots) are current; no timing metadata is kept, so an unchanged run leaves no diff."""
    import nbformat
    from nbclient import NotebookClient
    assignment = choose_assignment(course, assignment)
    paths = sorted((Path(course) / "source" / assignment).glob("*.ipynb"))
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            cell.metadata.pop("execution", None)
        NotebookClient(nb, timeout=300, kernel_name="python3", record_timing=False,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = merge_streams(cell.outputs)
        nbformat.write(nb, path)
    return paths


def merge_streams(outputs: list) -> list:
    """One stream output per run of stdout (or stderr) chunks: how the kernel splits a cell's
    printing into messages depends on timing, so unmerged outputs would differ run to run."""
    merged = []
    for out in outputs:
        prev = merged[-1] if merged else None
        if (out.get("output_type") == "stream" and prev is not None
                and prev.get("output_type") == "stream" and prev.get("name") == out.get("name")):
            prev["text"] += out["text"]
        else:
            merged.append(out)
    return merged
