"""Replaces builtins a grader might use."""
KIND = "cheat"
LAYER = 'grader-side scoring'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
import builtins
builtins.abs = lambda x: 0
builtins.round = lambda *a, **k: 0
builtins.print = lambda *a, **k: None
"""
