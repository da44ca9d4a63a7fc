"""Adds a grade cell worth 100 points."""
KIND = "damage"
LAYER = 'intake'   # what must stop it: a row of docs/reference/sandbox-layers.md
EXPECT = {'score': 'at_most_honest_right', 'review': True}


def damage(folder):
    import json
    path = folder / "ex4_cross_attention.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"].append({"cell_type": "code", "execution_count": None, "outputs": [], "source": "pass",
                        "metadata": {"nbgrader": {"grade": True, "solution": False, "locked": True,
                                                  "points": 100, "grade_id": "bonus", "schema_version": 3}}})
    path.write_text(json.dumps(nb))
