"""Raises a test cell's points from 5 to 500."""
from adversarial import edit
KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md

EXPECT = {'score': 'at_most_honest_right', 'review': True}


def damage(folder):
    edit(folder / "ex1_attention.ipynb", "ex1_attention", lambda c: c["metadata"]["nbgrader"].update(points=500))
