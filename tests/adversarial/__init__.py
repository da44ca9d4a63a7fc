"""The adversarial corpus: one module per attack, named by the attack, with its expected outcome.

Each module sets KIND (probe, cheat, disruption, damage), EXPECT (what the
grader must do with it) and either CODE (student code; probes set ESCAPED,
which makes their answer right only if the escape worked) or damage(folder). An attack may set
STUDENT_ID (the folder name it is graded under, when the name is the attack) and define
inspect(record, out) to check what it did to the batch's outputs.
``tests/sandbox/test_adversarial.py`` lays the whole corpus out as one class and
grades it as one batch.
"""
from __future__ import annotations

import json
from pathlib import Path


def edit(path: Path, grade_id: str, change) -> None:
    """Apply ``change`` to the cell with ``grade_id`` (None deletes it)."""
    nb = json.loads(path.read_text())
    cells = nb["cells"]
    for cell in list(cells):
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            if change is None:
                cells.remove(cell)
            else:
                change(cell)
    path.write_text(json.dumps(nb))
