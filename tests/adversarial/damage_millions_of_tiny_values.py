"""Pads a notebook with two million empty lists: 6 MB on disk, gigabytes once json.loads has made them,
in the grading process itself, outside every sandbox limit (its death once cost the whole class).

Stopped by intake.parse.shape: the values are counted before anything is materialised; over
MAX_VALUES the notebook is never parsed whole, its code is salvaged in bounded windows and graded.
"""
import json

KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'at_most_honest_right', 'review': True}


def damage(folder):
    path = folder / "ex1_attention.ipynb"
    nb = json.loads(path.read_text())
    path.write_text(json.dumps({"padding": [[]] * 2_000_000, **nb}))


def inspect(record, out):
    assert any("ex1_attention.ipynb is too large to read safely" in p and "JSON values" in p
               for p in record.integrity), record.integrity
    assert record.notebooks["ex1_attention"].earned > 0                 # its code was still graded
