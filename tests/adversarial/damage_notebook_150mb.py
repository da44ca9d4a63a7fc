"""Carries 150 MB of outputs."""
KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'at_most_honest_right', 'review': True}


def damage(folder):
    import json
    path = folder / "ex1_attention.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x" * (150 << 20)}]
    path.write_text(json.dumps(nb))
