"""Submits the instructor's source notebook (the solutions) with a byte-order mark added.

Stopped by intake: the source's digest is taken on the decoded notebook, as a submission's is
(parse.digest_of, integrity.source_event; rule 2: one truth for every byte). Not graded, flagged.
"""
KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'below_honest_right', 'review': True}


def damage(folder):
    source = folder.parents[2] / "source" / "ch04_attention" / "ex2_causal_mask.ipynb"
    (folder / "ex2_causal_mask.ipynb").write_bytes(b"\xef\xbb\xbf" + source.read_bytes())


def inspect(record, out):
    assert any("exact copy of the instructor's source notebook ex2_causal_mask.ipynb" in line
               for line in record.integrity), record.integrity
    assert record.notebooks["ex2_causal_mask"].earned == 0
