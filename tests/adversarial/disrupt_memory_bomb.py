"""Allocates 50 GB."""
KIND = "disruption"
LAYER = 'rlimits'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': False}
TARGET = "cell"
CODE = r"""
x = bytearray(50 * 2**30)
"""
