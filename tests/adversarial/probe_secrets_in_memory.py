"""Looks for the reference engine, the rubric or nbgrader among the worker's loaded modules."""
KIND = "probe"
LAYER = 'a worker process per notebook'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
import sys
ESCAPED = any(m.startswith(('solutions', 'autograder.grading', 'nbgrader'))
              for m in sys.modules)
"""
