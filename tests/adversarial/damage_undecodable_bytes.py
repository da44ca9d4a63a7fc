"""Puts bytes that are not UTF-8 into a notebook."""
KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'at_most_honest_right', 'review': True}


def damage(folder):
    path = folder / "ex1_attention.ipynb"
    path.write_bytes(path.read_bytes().replace(b"Softmax of x", b"Softmax \xff\xfe of x"))
