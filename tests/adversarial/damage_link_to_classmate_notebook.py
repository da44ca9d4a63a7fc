"""Replaces a wrong notebook with a link to a classmate's right one, to be graded on their work."""
KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'below_honest_right', 'review': True}


def damage(folder):
    path = folder / "ex2_causal_mask.ipynb"
    path.unlink()
    path.symlink_to(folder.parents[1] / "honest-right" / "ch04_attention" / "ex2_causal_mask.ipynb")
