"""Truncates a notebook in the middle."""
KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'at_most_honest_right', 'review': True}


def damage(folder):
    path = folder / "ex3_memory.ipynb"
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
