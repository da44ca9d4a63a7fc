"""Saves a notebook as nbformat 3."""
KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'at_most_honest_right', 'review': True}


def damage(folder):
    import json
    import nbformat
    path = folder / "ex4_cross_attention.ipynb"
    path.write_text(json.dumps(nbformat.convert(nbformat.read(path, as_version=4), 3)))
