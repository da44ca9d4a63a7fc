"""Makes submission_secret.txt a link to a classmate's secret, to receive their feedback.

Stopped by intake.secret: the secret is read without following links, so the submission has no usable
secret; intake flags the link, and nbgrader's feedback layout gets no page for it.
"""
KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': True}


def damage(folder):
    theirs = folder.parents[1] / "honest-wrong" / "ch04_attention" / "submission_secret.txt"
    theirs.write_text("b0b" * 40)
    (folder / "submission_secret.txt").symlink_to(theirs)


def inspect(record, out):
    assert any("submission_secret.txt is a link" in p for p in record.integrity)
    course = out.parent / "course"
    assert not list((course / "feedback" / "damage_secret_linked_to_classmate" / "ch04_attention").glob("*.html"))
    assert sorted(p.name for p in (course / "feedback" / "honest-wrong" / "ch04_attention").glob("*.html"))
