"""Puts a classmate's submission_secret.txt into this submission, to be handed their feedback by
nbgrader's release_feedback (it names each page by a hash of the secret).

Stopped by intake.secret (one reader of the secret) and outputs/nbfeedback: a secret two submissions
share is refused for both (flagged, listed for the instructor, no page in nbgrader's feedback layout).
"""
KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': True}
SECRET = "5ec7e7" * 20


def damage(folder):
    (folder.parents[1] / "honest-right" / "ch04_attention" / "submission_secret.txt").write_text(SECRET)
    (folder / "submission_secret.txt").write_text(SECRET)


def inspect(record, out):
    assert any("submission_secret.txt is the same as a classmate" in p for p in record.integrity)
    assert any("'honest-right'" in line for line in record.for_instructor)
    course = out.parent / "course"
    for student in ("honest-right", "damage_secret_shared_with_classmate"):
        assert not list((course / "feedback" / student / "ch04_attention").glob("*.html")), student
    assert "damage_secret_shared_with_classmate" in (out / "report.html").read_text()
