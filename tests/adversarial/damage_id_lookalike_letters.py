"""A folder named like a classmate in Cyrillic letters that look Latin ("honest-wrоng" with a Cyrillic o).

Stopped by the outputs: inert.told_apart finds ids that look alike (NFKC and common confusables) and
shows every letter outside ASCII as an escape, so the two rows read differently (rule 2).
"""
KIND = "damage"
LAYER = 'inert outputs'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': False}
STUDENT_ID = "honest-wr\u043eng"


def damage(folder):
    pass


def inspect(record, out):
    import csv
    with open(out / "grades.csv", newline="") as f:
        ids = [row["student_id"] for row in csv.DictReader(f)]
    assert "honest-wrong" in ids and "honest-wr\\u043eng" in ids and STUDENT_ID not in ids
