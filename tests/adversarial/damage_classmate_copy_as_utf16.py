"""Submits a classmate's notebook re-saved as UTF-16, so that its bytes differ from the original.

Stopped by intake: copies are decided on the decoded notebook that is graded (parse.read_notebook,
parse.digest), not on raw bytes (rule 2: one truth for every byte). Graded, flagged on both.
"""
KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': True}


def damage(folder):
    original = folder.parents[1] / "honest-right" / "ch04_attention" / "ex2_causal_mask.ipynb"
    (folder / "ex2_causal_mask.ipynb").write_bytes(original.read_text().encode("utf-16"))


def inspect(record, out):
    assert any("the same notebook as a classmate's" in line for line in record.integrity), record.integrity
    assert any("'honest-right'" in line for line in record.for_instructor), record.for_instructor
    assert not any("honest-right" in line for line in record.integrity)      # the student never sees who
