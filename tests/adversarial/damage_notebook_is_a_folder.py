"""Submits a folder named like the notebook."""
KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'below_honest_right', 'review': True}


def damage(folder):
    path = folder / "ex3_memory.ipynb"
    path.unlink()
    path.mkdir()
    (path / "x.ipynb").write_text("{}")
