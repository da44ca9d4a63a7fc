"""Intake: read a submission's notebooks as hostile bytes, keep the student's code, report damage.

Test cells are never taken from the submission: the grader's checks come from
the rubric and the course's own source/release. Every byte is checked before
use: links are not followed, only regular files are read, sizes and nesting
are capped, every field is type-checked. Damage (unreadable or odd files,
edited or deleted test cells, changed points, extra grade cells, links to
someone else's work) is described in plain words and marks the submission for
review; whatever code can still be recovered is graded.

    files.py       open folders and files without following links or blocking; capped reads
    parse.py       decode (BOM, UTF-16) and parse with bounded depth; salvage broken JSON
    cells.py       type-check every cell field used
    expected.py    the course's notebooks and the cells a submission must keep
    compare.py     keep code cells, compare locked ones
    names.py       find renamed copies of a notebook
    integrity.py   links, hard links and copies of someone else's files
    submission.py  the whole submission, one guarded notebook at a time
"""
from .expected import CourseError, TestCell, course_notebooks, expected_cells
from .model import CodeCell, GradeCell, Intake
from .submission import intake_submission

__all__ = ["CodeCell", "CourseError", "GradeCell", "Intake", "TestCell", "course_notebooks", "expected_cells",
           "intake_submission"]
