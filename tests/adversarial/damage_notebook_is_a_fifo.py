"""Submits a named pipe in place of a notebook: reading it would block the grader (and the class) forever."""
KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'below_honest_right', 'review': True}


def damage(folder):
    import os
    path = folder / "ex3_memory.ipynb"
    path.unlink()
    os.mkfifo(path)
