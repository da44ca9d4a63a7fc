"""Calls os._exit(), ending its process."""
KIND = "disruption"
LAYER = 'a worker process per notebook'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': True}
TARGET = "cell"
CODE = r"""
import os
os._exit(0)
"""
