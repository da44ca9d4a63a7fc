"""A folder name with a right-to-left override (U+202E), so that it displays reversed, as another name.

Stopped by the outputs: every name shown to a person goes through inert.visible / shown_id, which
write hidden and bidi characters as escapes (rule 2: a name shown is what it is).
"""
KIND = "damage"
LAYER = 'inert outputs'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': False}
STUDENT_ID = "\u202ethgir-tsenoh"            # displays as "honest-right" reversed back


def damage(folder):
    pass


def inspect(record, out):
    for page in (out / "report.html", out / "grades.csv", out / "feedback" / STUDENT_ID / "index.html"):
        text = page.read_text()
        assert "\u202e" not in text, page
    assert "\\u202ethgir-tsenoh" in (out / "grades.csv").read_text()
