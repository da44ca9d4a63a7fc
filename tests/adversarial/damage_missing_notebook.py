"""Leaves out one notebook."""
KIND = "damage"
EXPECT = {'score': 'at_most_honest_right', 'review': True}


def damage(folder):
    (folder / "ex3_memory.ipynb").unlink()
