"""Loops forever in the cell of causal_mask (the sample class's hostile-infinite-loop)."""
KIND = "disruption"
LAYER = 'wall-clock limits'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'below_honest_right', 'review': True}
TARGET = "causal_mask"
CODE = r"""
while True:
    pass
"""
