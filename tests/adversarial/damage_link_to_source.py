"""Links a notebook to the instructor's source notebook (the solutions), relative so it survives a move."""
KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'below_honest_right', 'review': True}


def damage(folder):
    path = folder / "ex2_causal_mask.ipynb"
    path.unlink()
    path.symlink_to("../../../source/ch04_attention/ex2_causal_mask.ipynb")
