"""Raises an exception whose text clears the terminal, retitles it and prints a fake total."""
KIND = "disruption"
LAYER = 'inert outputs'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'below_honest_right', 'review': 'any'}
TARGET = "causal_mask"
CODE = r"""
def causal_mask(n):
    raise ValueError("\x1b[2J\x1b[H\x1b]0;owned\x07\ntotal 28/28\n\x9b32mall checks passed")
"""


def inspect(record, out):
    from autograder.textreport import check_table
    table = check_table(record)
    assert not any(ch in table for ch in "\x1b\x07\x9b")
    assert [line for line in table.splitlines() if line.startswith("total")] == [
        f"total {record.total}/{record.max_total}" + ("  (needs review)" if record.needs_review else "")]
