"""Replaces numpy in sys.modules with a rigged module."""
KIND = "cheat"
LAYER = 'grader-side scoring'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
import sys, types
fake = types.ModuleType('numpy')
fake.allclose = lambda *a, **k: True
sys.modules['numpy.fake'] = fake
"""
