"""Submits a folder named like the notebook."""
KIND = "damage"
EXPECT = {'score': 'below_honest_right', 'review': True}


def damage(folder):
    path = folder / "ex3_memory.ipynb"
    path.unlink()
    path.mkdir()
    (path / "x.ipynb").write_text("{}")
