"""Scores into nbgrader's gradebook through nbgrader's own API (formgrader and `nbgrader export` agree).

nbgrader takes seconds to import and to open a database, so the writer runs
as a separate process started when the batch starts: it loads nbgrader and
records the assignment's structure (notebooks, grade, solution and locked
cells, as nbgrader's SaveCells does) while the submissions are graded, then
reads the scores from its stdin. Each graded cell gets the rubric's points as
its auto score; a submission that needs review is marked for manual grading
instead of being left at 0.

The writer process itself is ``autograder.gradebook_process``.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ..nbgrader_cli import tool_env
from ..records import OutputError


class GradebookWriter:
    """The writer process; ``finish(records)`` sends the scores and waits for it."""

    def __init__(self, db_url: str, course: Path, assignment: str):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "autograder.gradebook_process", db_url, str(course), assignment],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=tool_env(), text=True)

    def finish(self, records: list[dict]) -> None:
        scores = [{"student": r["student_id"], "review": bool(r["needs_review"]),
                   "earned": {g: c["earned"] for g, c in r.get("cells", {}).items()}} for r in records]
        out, err = self.proc.communicate(json.dumps(scores), timeout=600)
        if self.proc.returncode != 0:
            raise OutputError(f"could not update the gradebook: {err.strip()[-800:]}")

    def abandon(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
