"""A 240-character student folder name: it once aborted the whole class (the record's name was too long)."""
KIND = "damage"
LAYER = 'inert outputs'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': False}
STUDENT_ID = "s" * 240


def damage(folder):
    pass


def inspect(record, out):
    assert (out / "feedback" / STUDENT_ID / "index.html").exists()
    assert all(len(p.name) <= 255 for p in out.rglob("*"))
