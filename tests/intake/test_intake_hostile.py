"""Intake treats every byte as hostile: file kinds, links, copies, nesting and field types.

Each test is one root cause: without its defence the grader would follow the
link, block on the FIFO, recurse until it crashed, or crash on a wrong type.
"""
import codecs
import json
import os
import shutil
import socket
import stat
import time

import pytest

import autograder.intake.submission as submission_module
import autograder.intake.take as take_module
from autograder.course.view import read_course
from autograder.run.hardened import intake_submission
from autograder.samples.synthetic import write_submission
from conftest import RELEASE, ROOT, SOURCE

NB = "ex2_causal_mask"


@pytest.fixture
def course(tmp_path):
    """A course copy with two students, ann and bob."""
    course = tmp_path / "course"
    for part in ("source", "release"):
        shutil.copytree(ROOT / part, course / part)
    for student in ("ann", "bob"):
        write_submission(RELEASE, SOURCE, course / "submitted" / student / "ch04_attention")
    return course


def _accusing(intake) -> list[str]:
    """The findings that accuse the student: the instructor's until a person tells the student."""
    return [f.message for f in intake.findings if f.accuses]


def _private(intake) -> list[str]:
    """The findings' details for the instructor's eyes only (a classmate's name)."""
    return [f.private for f in intake.findings if f.private]


def _folder(course, student="ann"):
    return course / "submitted" / student / "ch04_attention"


def _intake(course, student="ann"):
    start = time.monotonic()
    intake = intake_submission(_folder(course, student), read_course(course, "ch04_attention"), student)
    assert time.monotonic() - start < 30
    return intake


def _graded(intake, name=NB):
    return [c for c in intake.cells if c.notebook == name]


def _only_this_notebook_lost(intake, name=NB):
    assert intake.needs_review and not _graded(intake, name)
    assert {c.notebook for c in intake.cells} == {"ex1_attention", "ex2_causal_mask", "ex3_memory",
                                                  "ex4_cross_attention"} - {name}


def _replace(course, make, student="ann"):
    path = _folder(course, student) / f"{NB}.ipynb"
    path.unlink()
    make(path)
    return path


def test_notebook_that_is_a_folder(course):
    _replace(course, lambda p: p.mkdir())
    intake = _intake(course)
    _only_this_notebook_lost(intake)
    assert any(f"{NB}.ipynb could not be read ('{NB}.ipynb' is a folder)" in p for p in intake.problems)


def test_notebook_that_is_a_fifo_does_not_block(course):
    _replace(course, os.mkfifo)
    intake = _intake(course)
    _only_this_notebook_lost(intake)
    assert any("named pipe" in p for p in intake.problems)


def test_notebook_that_is_a_socket(course, monkeypatch):
    sock = socket.socket(socket.AF_UNIX)
    monkeypatch.chdir(_folder(course))                     # a relative name: socket paths are short
    try:
        _replace(course, lambda p: sock.bind(p.name))
        intake = _intake(course)
    finally:
        sock.close()
    _only_this_notebook_lost(intake)
    assert any("a socket" in p for p in intake.problems)


def test_link_to_dev_zero_is_not_followed(course):
    _replace(course, lambda p: p.symlink_to("/dev/zero"))
    intake = _intake(course)
    _only_this_notebook_lost(intake)
    assert any("is a link (to '/dev/zero')" in p and "not followed" in p for p in intake.problems)
    assert _accusing(intake) == []          # it accuses no one: the student's page says what to hand in


def test_link_to_a_classmates_notebook_is_an_integrity_event(course):
    _replace(course, lambda p: p.symlink_to(_folder(course, "bob") / f"{NB}.ipynb"))
    intake = _intake(course)
    _only_this_notebook_lost(intake)
    assert any("Integrity" in p and "a classmate's submission" in p for p in intake.problems)
    assert _accusing(intake) and all("Integrity" in p for p in _accusing(intake))   # a person decides first
    _names_bob_for_the_instructor_only(intake)


def _names_bob_for_the_instructor_only(intake):
    """A classmate's name may reach the instructor's report, never the student's feedback."""
    assert not any("bob" in p for p in intake.problems) and any("classmate 'bob'" in p for p in _private(intake))


def test_link_to_the_instructors_source_is_an_integrity_event(course):
    _replace(course, lambda p: p.symlink_to(os.path.relpath(course / "source/ch04_attention" / f"{NB}.ipynb",
                                                            p.parent)))
    intake = _intake(course)
    _only_this_notebook_lost(intake)
    assert any("Integrity" in p and "source/" in p for p in intake.problems)


def test_student_folder_linked_to_a_classmate(course):
    shutil.rmtree(course / "submitted" / "ann")
    (course / "submitted" / "ann").symlink_to(course / "submitted" / "bob")
    intake = _intake(course)
    assert intake.cells == [] and intake.needs_review
    assert any("Integrity" in p and "a classmate's submission" in p for p in intake.problems)
    assert _accusing(intake) and all("Integrity" in p for p in _accusing(intake))   # a person decides first
    _names_bob_for_the_instructor_only(intake)


def test_assignment_folder_linked_to_source(course):
    shutil.rmtree(_folder(course))
    _folder(course).symlink_to(course / "source/ch04_attention")
    intake = _intake(course)
    assert intake.cells == [] and any("Integrity" in p and "source/" in p for p in intake.problems)


def test_hard_link_and_copy_of_a_source_notebook(course):
    source = course / "source/ch04_attention" / f"{NB}.ipynb"
    _replace(course, lambda p: os.link(source, p))
    intake = _intake(course)
    _only_this_notebook_lost(intake)
    assert any("hard link to the instructor's" in p for p in intake.problems)
    _replace(course, lambda p: shutil.copy(source, p))
    intake = _intake(course)
    _only_this_notebook_lost(intake)
    assert any("exact copy of the instructor's source notebook" in p for p in intake.problems)


def test_hard_link_to_a_classmate_flags_both(course):
    _replace(course, lambda p: os.link(_folder(course, "bob") / f"{NB}.ipynb", p))
    for student in ("ann", "bob"):
        intake = _intake(course, student)
        assert intake.needs_review and _graded(intake)
        other = "bob" if student == "ann" else "ann"
        assert any("a classmate's notebook" in p and "hard link" in p for p in intake.problems)
        assert any(f"classmate '{other}'" in p for p in _private(intake))
        assert not any(other in p for p in intake.problems)


def test_deeply_nested_json_is_refused_without_recursion(course):
    _replace(course, lambda p: p.write_text("[" * 1_000_000 + "]" * 1_000_000))
    intake = _intake(course)
    _only_this_notebook_lost(intake)
    assert any("nested at least 1000000 levels deep" in p for p in intake.problems)


def _edit_cells(course, change):
    path = _folder(course) / f"{NB}.ipynb"
    nb = json.loads(path.read_text())
    change(nb)
    path.write_text(json.dumps(nb))


def _by_id(nb, grade_id):
    return next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)


@pytest.mark.parametrize("change, words", [
    (lambda nb: nb.update(cells={"a": 1}), "its 'cells' is an object, not a list"),
    (lambda nb: nb["cells"].append(7), "is 7, not an object"),
    (lambda nb: nb["cells"].append({"cell_type": "code", "source": {"x": 1}}), "source is an object, not text"),
    (lambda nb: nb["cells"].append({"cell_type": "code", "source": ["a", 3]}), "source is a list, not text"),
    (lambda nb: nb["cells"].append({"cell_type": 4, "source": ""}), "cell_type that is 4"),
    (lambda nb: nb["cells"][0].update(metadata="hi"), "metadata is the text 'hi', not an object"),
    (lambda nb: _by_id(nb, "ex2_causal")["metadata"]["nbgrader"].update(points="5"), "points is the text '5'"),
    (lambda nb: _by_id(nb, "ex2_causal")["metadata"]["nbgrader"].update(points=float("nan")), "points is nan"),
    (lambda nb: _by_id(nb, "ex2_causal")["metadata"]["nbgrader"].update(points=1e308), "points is 1e+308"),
    (lambda nb: _by_id(nb, "ex2_causal")["metadata"]["nbgrader"].update(grade_id=["x"]), "grade_id is a list"),
    (lambda nb: _by_id(nb, "ex2_causal")["metadata"]["nbgrader"].update(locked="yes"), "'locked' is the text"),
    (lambda nb: _by_id(nb, "ex2_causal")["metadata"].update(nbgrader=[1]), "nbgrader metadata is a list"),
])
def test_wrong_types_damage_the_notebook_with_one_line(course, change, words):
    _edit_cells(course, change)
    intake = _intake(course)
    assert intake.needs_review
    lines = [p for p in intake.problems if p.startswith(f"{NB}.ipynb is damaged")]
    assert len(lines) == 1 and words in lines[0], intake.problems
    assert all(c.notebook != "ex1_attention" or c.source for c in intake.cells)


def test_a_surprise_in_one_notebook_damages_only_that_notebook(course, monkeypatch):
    real = submission_module.cells_of

    def exploding(nb, name, intake):
        if name == NB:
            raise KeyError("\x1b[2Jsurprise")
        return real(nb, name, intake)
    monkeypatch.setattr(submission_module, "cells_of", exploding)
    intake = _intake(course)
    _only_this_notebook_lost(intake)
    line = next(p for p in intake.problems if "could not be read by the grader" in p)
    assert "KeyError" in line and "\x1b" not in line


def test_a_notebook_cannot_claim_to_be_salvaged(course):
    _edit_cells(course, lambda nb: (nb.update(salvaged=True), nb["cells"].remove(_by_id(nb, "ex2_causal"))))
    assert any("the test cell 'ex2_causal' was deleted" in p for p in _intake(course).problems)


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_notebook_that_is_a_device_is_never_opened(course):
    _replace(course, lambda p: os.mknod(p, 0o600 | stat.S_IFCHR, os.makedev(1, 5)))     # /dev/zero's numbers
    intake = _intake(course)
    _only_this_notebook_lost(intake)
    assert any("a character device" in p for p in intake.problems)


def test_a_folder_of_many_files_still_finds_the_notebooks(course):
    folder = _folder(course)
    for i in range(10_050):
        (folder / f"a{i:05d}.txt").touch()
    intake = _intake(course)
    assert intake.problems == [] and {c.notebook for c in intake.cells} >= {NB}


@pytest.mark.parametrize("text", [
    '{"cells": [{"source": "' + '\\\\"' * 1_000_000,                 # escaped quotes, never closed
    '{"cells": [{"source": [' + '"a"  ' * 200_000 + "x",          # a list of strings, never closed
    '{"cells": [{' + '"source": ["a" "b"], ' * 200_000,             # many keys, each value broken
], ids=["unclosed-string", "unclosed-source-list", "many-broken-sources"])
def test_broken_json_is_read_in_linear_time(course, text):
    _replace(course, lambda p: p.write_text(text))
    start = time.monotonic()
    intake = _intake(course)
    assert time.monotonic() - start < 20
    assert any(f"{NB}.ipynb is not valid JSON" in p for p in intake.problems)


def test_a_notebook_past_the_hard_limit_is_never_read(course):
    def sparse(path):
        path.touch()
        os.truncate(path, 300 << 20)                                     # sparse: no disk used
    _replace(course, sparse)
    intake = _intake(course)
    _only_this_notebook_lost(intake)
    assert any("too large to read" in p for p in intake.problems)


def test_a_byte_identical_copy_of_a_classmate_flags_both(course):
    shutil.copy(_folder(course, "bob") / f"{NB}.ipynb", _folder(course) / f"{NB}.ipynb")
    for student, other in (("ann", "bob"), ("bob", "ann")):
        intake = _intake(course, student)
        assert intake.needs_review and _graded(intake)
        [line] = intake.problems
        assert "the same notebook as a classmate's" in line and other not in line
        assert _accusing(intake) == [line]                          # the instructor's until a person says so
        assert _private(intake) == [f"{NB}.ipynb: the same notebook as classmate(s) '{other}'."]


# Every encoding intake accepts, and a re-save that changes only the layout: the same notebook to the grader.
ENCODINGS = {
    "utf-8 with a byte-order mark": lambda text: codecs.BOM_UTF8 + text.encode("utf-8"),
    "utf-16 (native byte order)": lambda text: text.encode("utf-16"),
    "utf-16-le with its mark": lambda text: codecs.BOM_UTF16_LE + text.encode("utf-16-le"),
    "utf-16-be with its mark": lambda text: codecs.BOM_UTF16_BE + text.encode("utf-16-be"),
    "re-indented, keys reordered, lines joined": lambda text: json.dumps(_relaid(json.loads(text)), indent=4)
    .encode("utf-8"),
}


def _relaid(nb):
    """The same notebook laid out differently: keys in reverse order, each multi-line source one string."""
    for cell in nb["cells"]:
        cell["source"] = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    return json.loads(json.dumps(nb, sort_keys=True), object_pairs_hook=lambda pairs: dict(reversed(pairs)))


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_a_classmates_notebook_re_encoded_is_still_a_copy(course, encoding):
    """Copy detection reads the decoded notebook intake grades, not the raw bytes: a BOM, UTF-16 or a
    re-indented file is the same notebook (it once was graded 28/28 with no flag)."""
    text = (_folder(course, "bob") / f"{NB}.ipynb").read_text()
    (_folder(course) / f"{NB}.ipynb").write_bytes(ENCODINGS[encoding](text))
    for student, other in (("ann", "bob"), ("bob", "ann")):
        intake = _intake(course, student)
        assert intake.needs_review and _graded(intake)
        assert any("the same notebook as a classmate's" in p and other not in p for p in intake.problems)
        assert _private(intake) == [f"{NB}.ipynb: the same notebook as classmate(s) '{other}'."]


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_the_source_notebook_re_encoded_is_not_credited(course, encoding):
    """The instructor's source notebook (the solutions) with a BOM or as UTF-16 is the source: not graded
    (it was once credited 28 where the honest score is 20, flagged only for edited locked cells)."""
    text = (course / "source/ch04_attention" / f"{NB}.ipynb").read_text()
    (_folder(course) / f"{NB}.ipynb").write_bytes(ENCODINGS[encoding](text))
    intake = _intake(course)
    _only_this_notebook_lost(intake)
    assert any("exact copy of the instructor's source notebook" in p for p in intake.problems)


def test_a_notebook_changed_in_content_is_not_a_copy(course):
    """The digest ignores encoding and layout only: one changed character of content is another notebook."""
    nb = json.loads((_folder(course, "bob") / f"{NB}.ipynb").read_text())
    nb["metadata"]["sample_submission"]["student"] = "bob!"
    (_folder(course) / f"{NB}.ipynb").write_bytes(ENCODINGS["utf-16 (native byte order)"](json.dumps(nb)))
    assert not any("classmate" in p for p in _intake(course).problems)


def test_untouched_release_notebooks_are_not_copies(course):
    for student in ("ann", "bob"):
        shutil.copy(RELEASE / f"{NB}.ipynb", _folder(course, student) / f"{NB}.ipynb")
    assert not any("the same notebook as" in p for p in _intake(course).problems)


def test_identical_unfinished_notebooks_are_not_copies(course):
    """Two students who saved the release notebook untouched in the same Jupyter have identical files."""
    for student in ("ann", "bob"):
        nb = json.loads((RELEASE / f"{NB}.ipynb").read_text())
        nb["metadata"]["saved_by"] = "the same Jupyter"
        (_folder(course, student) / f"{NB}.ipynb").write_text(json.dumps(nb))
    assert not any("the same notebook as" in p for p in _intake(course).problems)


def test_a_folder_that_cannot_be_listed_is_damage(course, monkeypatch):
    def refuse(fd):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(take_module, "listing", refuse)              # how intake lists the folder
    intake = _intake(course)
    assert intake.cells == [] and any("could not be listed (Permission denied)" in p for p in intake.problems)


def test_identical_short_answers_are_not_copies(course):
    """Two students who wrote ex3's obvious one-liners and ran everything have identical files: too little
    of their own to call it copying."""
    nb = json.loads((RELEASE / "ex3_memory.ipynb").read_text())
    answers = {"def attention_memory_bytes": "    return n * n * dtype_bytes",
               "def ffn_memory_bytes": "    return n * expansion * d_model * dtype_bytes",
               "def crossover_length": "    n = 1\n    while attention_memory_bytes(n, dtype_bytes) < "
                                       "ffn_memory_bytes(n, d_model, dtype_bytes, expansion):\n"
                                       "        n += 1\n    return n"}
    for cell in nb["cells"]:
        text = "".join(cell["source"])
        for head, body in answers.items():
            if cell["cell_type"] == "code" and head in text and "raise NotImplementedError" in text:
                text = text.replace("raise NotImplementedError()", body.strip(), 1)
                text = text.replace(body.strip(), body.lstrip(" "), 1)
        cell["source"] = text
    for student in ("ann", "bob"):
        (_folder(course, student) / "ex3_memory.ipynb").write_text(json.dumps(nb))
    intake = _intake(course)
    assert [c for c in intake.cells if c.notebook == "ex3_memory" and "n * n * dtype_bytes" in c.source]
    assert not any("the same notebook as" in p for p in intake.problems) and _private(intake) == []
