"""Loops forever."""
KIND = "disruption"
LAYER = 'wall-clock limits'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': True}
TARGET = "cell"
CODE = r"""
while True:
    pass
"""
