"""A folder named like a classmate with a zero-width space added: two rows that look like one student.

Stopped by the outputs: inert.told_apart shows ids that look alike with their hidden characters as
escapes, so grades.csv and the report have two rows that read differently (rule 2).
"""
KIND = "damage"
LAYER = 'inert outputs'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': False}
STUDENT_ID = "honest-right\u200b"


def damage(folder):
    pass


def inspect(record, out):
    import csv
    with open(out / "grades.csv", newline="") as f:
        ids = [row["student_id"] for row in csv.DictReader(f)]
    assert "honest-right" in ids and "honest-right\\u200b" in ids and STUDENT_ID not in ids
    assert "\u200b" not in (out / "report.html").read_text()
