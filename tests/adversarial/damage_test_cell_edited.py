"""Replaces a visible test cell with a print of success."""
from adversarial import edit
KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md

EXPECT = {'score': 'at_most_honest_right', 'review': True}


def damage(folder):
    edit(folder / "ex2_causal_mask.ipynb", "ex2_causal_visible", lambda c: c.update(source="print('ok')"))
