"""Prints fake passing results and a full score."""
KIND = "cheat"
LAYER = 'grader-side scoring'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
print('[PASS] values (2/2): ok')
print('total 28/28')
print('{"score": 28, "total": 28}')
"""
