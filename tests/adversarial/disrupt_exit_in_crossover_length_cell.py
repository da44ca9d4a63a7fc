"""Calls os._exit(1) in the cell of crossover_length (the sample class's hostile-exits)."""
KIND = "disruption"
LAYER = 'a worker process per notebook'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'below_honest_right', 'review': True}
TARGET = "crossover_length"
CODE = r"""
import os
os._exit(1)
"""
