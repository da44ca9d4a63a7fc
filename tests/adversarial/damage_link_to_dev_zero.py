"""Makes a notebook a link to /dev/zero: following it would read zeros until memory ran out."""
KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'below_honest_right', 'review': True}


def damage(folder):
    path = folder / "ex3_memory.ipynb"
    path.unlink()
    path.symlink_to("/dev/zero")
