"""Lists the course's folder (gradebook, source, submissions)."""
KIND = "probe"
LAYER = 'Landlock'   # what must stop it: a row of the README's layer tables
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
import os
ESCAPED = len(os.listdir(COURSE)) > 0
"""
