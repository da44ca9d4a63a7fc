"""Replaces a notebook with JSON nested a million levels deep (Python's parser would recurse until it crashed)."""
KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'below_honest_right', 'review': True}


def damage(folder):
    (folder / "ex3_memory.ipynb").write_text("[" * 1_000_000 + "]" * 1_000_000)
