"""Rubric checks, misconception diagnosis, sandboxed execution and batch grading."""
from .grading import build_record, grade_namespace, run_cell
from .rubric import RUBRIC, max_total

__all__ = ["grade_namespace", "run_cell", "build_record", "RUBRIC", "max_total"]
