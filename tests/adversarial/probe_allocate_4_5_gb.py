"""Allocates 4.5 GB without touching the limits."""
KIND = "probe"
LAYER = 'rlimits'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_wrong', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
big = np.ones(int(4.5e9) // 8)
ESCAPED = big.sum() > 0
"""
