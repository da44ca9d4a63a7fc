"""Lists the course's folder (gradebook, source, submissions)."""
KIND = "probe"
LAYER = 'Landlock'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
import os
ESCAPED = len(os.listdir(COURSE)) > 0
"""
