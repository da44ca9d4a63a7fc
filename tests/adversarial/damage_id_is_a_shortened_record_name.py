"""A folder named as the record file of a classmate's long id was once shortened to ('sss...~digest').

Before, that name was itself a plain id: this student's record overwrote the classmate's, who vanished
from grades.csv, the gradebook and the summary with exit code 0. Stopped by records.file_name, one to
one (a plain name never holds '~'), and write_record, which never replaces another student's record.
"""
import hashlib

KIND = "damage"
LAYER = 'inert outputs'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'honest_right', 'review': False}
VICTIM = "s" * 240                                        # damage_long_folder_name's id
STUDENT_ID = "s" * 40 + "~" + hashlib.sha256(VICTIM.encode()).hexdigest()[:16]


def damage(folder):
    pass


def inspect(record, out):
    import json
    found = {json.loads(p.read_text())["student_id"] for p in (out / "records").glob("*.json")}
    assert {VICTIM, STUDENT_ID} <= found
    assert (out / "grades.csv").read_text().count("s" * 240) == 1
