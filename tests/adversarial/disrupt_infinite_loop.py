"""Loops forever."""
KIND = "disruption"
LAYER = 'wall-clock limits'   # what must stop it: a row of the README's layer tables
EXPECT = {'score': 'honest_right', 'review': True}
TARGET = "cell"
CODE = r"""
while True:
    pass
"""
