"""Makes the whole student folder a link to a classmate's folder."""
KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'below_honest_right', 'review': True}


def damage(folder):
    import shutil
    shutil.rmtree(folder.parent)
    folder.parent.symlink_to("honest-right")
