"""Calls sys.exit()."""
KIND = "disruption"
LAYER = 'a worker process per notebook'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': False}
TARGET = "cell"
CODE = r"""
import sys
sys.exit(3)
"""
