"""Reads every source notebook it can glob, in the cell of softmax (the sample class's hostile-reads-source)."""
KIND = "disruption"
LAYER = 'Landlock'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': False}
TARGET = "softmax"
CODE = r"""
import glob
leak = [open(p).read() for p in glob.glob('/**/source/**/*.ipynb', recursive=True)]
"""
