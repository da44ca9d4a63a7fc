"""The grading process's memory is bounded in bytes, not in JSON values.

Python holds a string at the width of its widest character: one emoji in a long string makes every
character of it cost 4 bytes, and intake used to copy such text several times (the decoded document,
its scans, ``json.loads``, the digest's canonical text, its NFC form and bytes): 12 times the file.
Now the decoded size is measured on the bytes and budgeted before anything is decoded, the document
is held narrow, the digest is streamed and the notebook is dropped once its cells are taken.
"""
from __future__ import annotations

import hashlib
import json
import random
import shutil
import tracemalloc
import unicodedata

import pytest

from autograder.course.view import read_course
from autograder.intake import canonical, parse
from autograder.intake.model import Intake
from autograder.intake.submission import intake_submission
from batch_helpers import make_class

A, NB = "ch04_attention", "ex1_attention"
WIDE = "\U0001F600"


def _peak(call) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        call()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return make_class(tmp_path_factory.mktemp("memory"), ["correct-1"])


@pytest.mark.parametrize("where", ["output", "markdown"])
def test_one_wide_character_in_a_long_string_costs_a_bounded_multiple_of_the_file(course, tmp_path, where):
    mine = tmp_path / "c"
    shutil.copytree(course, mine)
    path = mine / "submitted/correct-1" / A / f"{NB}.ipynb"
    nb = json.loads(path.read_text())
    long = "a" * (4 << 20) + WIDE
    if where == "output":
        code = next(c for c in nb["cells"] if c["cell_type"] == "code")
        code["outputs"] = [{"output_type": "stream", "name": "stdout", "text": long}]
    else:
        nb["cells"].append({"cell_type": "markdown", "metadata": {}, "source": long})
    path.write_text(json.dumps(nb, ensure_ascii=False))
    del nb, long
    size = path.stat().st_size
    got = []
    peak = _peak(lambda: got.append(intake_submission(path.parent, read_course(mine, A), "correct-1")))
    assert peak <= 9 * size, f"intake held {peak / size:.1f} times the file"      # it was 12 (and 24 with -n)
    assert len(got[0].files) == 4 and len([c for c in got[0].cells if c.notebook == NB]) > 0


def test_a_notebook_that_would_decode_past_the_budget_is_refused_before_it_is_decoded(monkeypatch):
    raw = json.dumps({"nbformat": 4, "cells": [{"cell_type": "markdown", "source": "a" * (8 << 20) + WIDE}]},
                     ensure_ascii=False).encode()
    monkeypatch.setattr(parse, "MAX_DECODED_BYTES", 16 << 20)
    intake = Intake()
    peak = _peak(lambda: parse.read_notebook(raw, NB, intake))
    [line] = intake.problems
    assert "would take 34 MB of the grader's memory once decoded" in line and "beyond U+FFFF" in line
    assert peak < len(raw) / 2                                  # measured on the bytes, never decoded


CASES = ['{"nbformat": 4, "cells": [{"cell_type": "code", "source": ["x = \'%s\'\\n", "y"]}]}' % t
         for t in ("é", WIDE, "e\u0301" + WIDE, "\\u00e9" + WIDE, "\\\\" + WIDE, "\ud7ff" * 3 + WIDE)]


@pytest.mark.parametrize("text", CASES + ['{"cells": [{"source": "\\' + WIDE + '"}]}', '{"cells": [' + WIDE])
def test_the_narrow_document_parses_to_the_same_notebook(text):
    """Wide text is decoded with JSON's escapes for what is not ASCII: the same values, the same verdicts
    (a backslash before a wide character is broken JSON either way)."""
    raw = text.encode("utf-8", "surrogatepass")
    try:
        expected = json.loads(raw.decode("utf-8", "surrogatepass"))
    except ValueError:
        expected = None
    got, salvaged = parse.read_notebook(raw, NB, Intake())
    assert (got if not salvaged else None) == (expected if isinstance(expected, dict) else None)


def _reference_digest(nb) -> str:
    """The canonical digest written whole, as intake computed it before it was streamed."""
    def lines(v):
        return "".join(v) if isinstance(v, list) and all(isinstance(x, str) for x in v) else v

    def output(o):
        if not isinstance(o, dict):
            return o
        o = {**o, "text": lines(o["text"])} if "text" in o else o
        return {**o, "data": {k: lines(v) for k, v in o["data"].items()}} if isinstance(o.get("data"), dict) else o

    def cell(c):
        if not isinstance(c, dict):
            return c
        c = {**c, "source": lines(c["source"])} if "source" in c else c
        return {**c, "outputs": [output(o) for o in c["outputs"]]} if isinstance(c.get("outputs"), list) else c
    whole = {**nb, "cells": [cell(c) for c in nb["cells"]]} if isinstance(nb.get("cells"), list) else nb
    text = json.dumps(whole, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(unicodedata.normalize("NFC", text).encode("utf-8", "surrogatepass")).hexdigest()


@pytest.mark.parametrize("slice_chars", [3, 1 << 16])
def test_the_streamed_digest_is_the_canonical_digest(monkeypatch, slice_chars):
    """Cut anywhere (slices of 3 characters), with combining marks, Hangul jamo, surrogates and ligatures
    at every boundary, the streamed digest equals the whole text's: copies are still found."""
    monkeypatch.setattr(canonical, "_SLICE", slice_chars)
    rnd = random.Random(slice_chars)
    alphabet = ["a", "é", "e\u0301", "\u0301", WIDE, "\n", '"', "\\", "\u1100", "\u1161", "\ud800", "ﬁ", "Å",
                "\u0327", "\x00", " "]
    for _ in range(600):
        s = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 24)))
        k = rnd.randint(0, len(s))
        nb = {"cells": [{"source": [s[:k], s[k:]], "outputs": [{"text": [s, "x"], "data": {"t": [s[3:], s[:3]],
              "n": 1.5}}], "other": [s]}, "not a cell", {"source": s, "outputs": {"text": [s]}}],
              "outputs": [{"text": ["a", s]}], "metadata": {s: [None, True, 3, float("nan"), -0.0, 10 ** 30]}}
        assert parse.digest(nb) == _reference_digest(nb), repr(s)


def test_a_cell_of_many_short_lines_is_hashed_in_few_pieces(monkeypatch):
    """The digest normalised and hashed each line of a list of lines on its own: a code cell of 4 MiB in
    200,000 lines was 200,000 normalisations, escapes and hash updates (intake's largest cost for it)."""
    calls = {"update": 0, "escape": 0}
    real_update, real_escape = canonical._update, canonical._escape

    def update(h, pieces):
        calls["update"] += 1
        real_update(h, pieces)

    def escape(text):
        calls["escape"] += 1
        return real_escape(text)
    monkeypatch.setattr(canonical, "_update", update)
    monkeypatch.setattr(canonical, "_escape", escape)
    lines = [f"# line {i:07d} é\n" for i in range(200_000)]
    nb = {"cells": [{"cell_type": "code", "source": lines, "metadata": {}, "outputs": []}], "metadata": {}}
    assert parse.digest(nb) == _reference_digest(nb)
    chars = sum(map(len, lines))
    assert calls["update"] <= chars // canonical._SLICE + 5 and calls["escape"] <= 2 * (chars // canonical._SLICE) + 20, calls


def test_counting_a_students_lines_stops_once_there_are_enough():
    """Whether a notebook is the student's own work needs 8 lines of theirs; the rest of a cell of
    megabytes is not read for it."""
    from autograder.intake.compare import MIN_COPY_LINES, work_lines
    from autograder.intake.model import CodeCell

    class Unread(str):
        def splitlines(self, *args):
            raise AssertionError("read past the lines needed")
    cells = [CodeCell("ex1_attention", 0, "x = 1\n" * 20), CodeCell("ex1_attention", 1, Unread("y = 2\n" * 10))]
    assert work_lines(cells, frozenset(), MIN_COPY_LINES) == MIN_COPY_LINES
    assert work_lines(cells[:1], frozenset()) == 20


def test_a_classmates_oversized_notebook_is_not_read_for_the_copy_checks(tmp_path, monkeypatch):
    """Every grading process reads the class once for its copy checks; a classmate's notebook over the size
    limit, which has no digest there, was read whole all the same (a 63 MB one: 126 MB of every honest
    grading process, the limit patched to 1 MB here)."""
    from autograder.assignment import NOTEBOOKS
    from autograder.intake import integrity
    monkeypatch.setattr(integrity, "MAX_NOTEBOOK_BYTES", 1 << 20)
    course = make_class(tmp_path, ["correct-1", "no-scaling"])
    big = course / "submitted" / "no-scaling" / "ch04_attention" / "ex1_attention.ipynb"
    nb = json.loads(big.read_text())
    nb["cells"].append({"cell_type": "markdown", "metadata": {}, "source": "a" * (6 << 20)})
    big.write_text(json.dumps(nb))
    tracemalloc.start()
    try:
        index = integrity.read_class(course / "submitted", "ch04_attention", tuple(NOTEBOOKS))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 << 20, peak
    assert sum(1 for students in index.digests.values() if "no-scaling" in students) == 3     # ex2-ex4 only


def test_a_million_tiny_code_cells_cost_what_the_first_5000_do():
    """Over the JSON values' limit a notebook is salvaged, which kept the position of every source key and
    every cell type (a million of each: 8 times the file in lists, and over a minute of one grading
    process before the first cell was taken); now only the cells it keeps are looked for."""
    text = '{"nbformat": 4, "cells": [' + ",".join(['{"cell_type": "code", "source": "x=1"}'] * 1_000_000) + "]}"
    got = []
    peak = _peak(lambda: got.append(parse.salvaged_cells(text)))
    assert len(got[0]) == parse.MAX_SALVAGED and peak < len(text) / 8, f"salvage held {peak / len(text):.1f}x"
    intake = Intake()
    nb, salvaged = parse.read_notebook(text.encode(), NB, intake)
    assert salvaged and len(nb["cells"]) == parse.MAX_SALVAGED
    assert "(of its first 5,000 cells; the rest were not read)" in intake.problems[0]


def test_a_huge_code_cell_is_not_run_and_the_rest_of_the_notebook_is_graded(course, tmp_path):
    """A code cell's text went whole through the comparisons, the line count and the autograded notebook
    (a 40 MB cell cost minutes of the grading process, outside every limit): the code taken from a notebook
    is now bounded, and the cell that would pass the bound is named and not run."""
    mine = tmp_path / "c"
    shutil.copytree(course, mine)
    path = mine / "submitted/correct-1" / A / f"{NB}.ipynb"
    nb = json.loads(path.read_text())
    before = intake_submission(path.parent, read_course(mine, A), "correct-1")
    honest = [c for c in before.cells if c.notebook == NB]
    nb["cells"].insert(1, {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": "x = 1\n" * 700_000})                  # 4.2 MB of code
    path.write_text(json.dumps(nb))
    got = intake_submission(path.parent, read_course(mine, A), "correct-1")
    [line] = [p for p in got.problems if "characters of code" in p]
    assert "cell 2 holds 4,200,000 characters of code, past the notebook's limit" in line and "not run" in line
    kept = [c for c in got.cells if c.notebook == NB]
    assert [c.source for c in kept if c.source] == [c.source for c in honest]         # the rest, as before
    assert [g.grade_id for g in got.grade_cells] == [g.grade_id for g in before.grade_cells]
    assert len(got.problems) == len(before.problems) + 1
