"""Appends to the course's nbgrader_config.py."""
KIND = "probe"
LAYER = 'Landlock'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
open(COURSE + '/nbgrader_config.py', 'a').write('# owned')
ESCAPED = True
"""
