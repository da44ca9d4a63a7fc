"""Rubric checks, misconception diagnosis, sandboxed execution and batch grading."""
