"""Hypothesis fuzzer for intake: any JSON structure, any bytes, any file kind; intake never raises or hangs.

Each example writes one notebook (or something in its place) into a fresh
submission folder and takes it in. Intake must return, within a bounded time,
an Intake whose messages are inert text; a surprise is damage, never an
exception.
"""
import codecs
import json
import os
import shutil
import socket
import stat
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.inert import terminal
from autograder.course.view import read_course
from autograder.intake import intake_submission
from conftest import RELEASE, SOURCE

NB = "ex2_causal_mask"
REAL = (RELEASE / f"{NB}.ipynb").read_text()
GRADE_IDS = ["ex2_mask", "ex2_causal", "ex2_mask_visible", "ex2_causal_visible", "bonus"]
SECONDS = 10
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)

scalars = (st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=12))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=24)
nbgrader = st.fixed_dictionaries({}, optional={
    "grade": st.booleans() | json_values, "solution": st.booleans() | json_values,
    "locked": st.booleans() | json_values, "points": st.integers(0, 10) | json_values,
    "grade_id": st.sampled_from(GRADE_IDS) | json_values, "schema_version": json_values})
cells = st.fixed_dictionaries({}, optional={
    "cell_type": st.sampled_from(["code", "markdown", "raw"]) | json_values,
    "source": st.text(max_size=40) | st.lists(st.text(max_size=10), max_size=4) | json_values,
    "metadata": st.fixed_dictionaries({}, optional={"nbgrader": nbgrader | json_values}) | json_values,
    "outputs": json_values})
notebooks = st.fixed_dictionaries({}, optional={
    "nbformat": st.sampled_from([4, 3, 2, 5, "4", 4.0]) | json_values,
    "nbformat_minor": json_values, "metadata": json_values,
    "cells": st.lists(cells, max_size=8) | json_values,
    "worksheets": st.lists(st.fixed_dictionaries({"cells": st.lists(cells, max_size=3)}), max_size=2)})


def _take_in(write) -> None:
    """Lay out a submission whose ex2 notebook ``write(path)`` makes, take it in, check the outcome."""
    tmp = Path(tempfile.mkdtemp(prefix="fuzz-intake-"))
    try:
        folder = tmp / "submitted" / "ann" / "ch04_attention"
        folder.mkdir(parents=True)
        (tmp / "submitted" / "bob").mkdir()
        write(folder / f"{NB}.ipynb")
        start = time.monotonic()
        intake = intake_submission(folder / f"{NB}.ipynb", read_course(SOURCE.parents[1], "ch04_attention"), "ann")
        assert time.monotonic() - start < SECONDS
        for line in intake.problems + intake.notes:
            assert isinstance(line, str) and terminal(line) == line and "\n" not in line
        assert all(isinstance(c.source, str) and c.notebook == NB for c in intake.cells)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@FUZZ
@given(notebooks)
def test_any_json_structure(nb):
    _take_in(lambda p: p.write_text(json.dumps(nb)))


@FUZZ
@given(st.binary(max_size=3000))
def test_any_bytes(raw):
    _take_in(lambda p: p.write_bytes(raw))


@FUZZ
@given(st.integers(0, len(REAL)), st.binary(max_size=40), st.integers(0, 200))
def test_real_notebook_cut_and_spliced(at, insert, cut):
    _take_in(lambda p: p.write_bytes(REAL.encode()[:at] + insert + REAL.encode()[at + cut:]))


@FUZZ
@given(st.sampled_from("[{"), st.integers(1, 400_000), st.booleans())
def test_any_nesting_depth(bracket, depth, closed):
    closing = {"[": "]", "{": "}"}[bracket] * depth if closed else ""
    body = bracket * depth if bracket == "[" else '{"a":' * (depth - 1) + "{"
    _take_in(lambda p: p.write_text(body + closing))


def _fifo(p):
    os.mkfifo(p)


def _socket(p):
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(p))                                     # left bound: intake must not connect or wait
    _SOCKETS.append(sock)


def _device(p):
    if os.geteuid() == 0:
        os.mknod(p, 0o600 | stat.S_IFCHR, os.makedev(1, 5))      # /dev/zero's numbers
    else:
        p.symlink_to("/dev/zero")


_SOCKETS: list = []
KINDS = {
    "folder": lambda p: p.mkdir(),
    "fifo": _fifo,
    "link to /dev/zero": lambda p: p.symlink_to("/dev/zero"),
    "link to /dev/stdin": lambda p: p.symlink_to("/dev/stdin"),
    "dangling link": lambda p: p.symlink_to(p.parent / "nowhere.ipynb"),
    "link loop": lambda p: p.symlink_to(p.name),
    "link to a classmate": lambda p: p.symlink_to(p.parents[2] / "bob"),
    "link to source": lambda p: p.symlink_to(SOURCE / f"{NB}.ipynb"),
    "socket": _socket,
    "device": _device,
    "empty file": lambda p: p.write_bytes(b""),
    "unreadable file": lambda p: (p.write_text(REAL), p.chmod(0)),
}


@settings(max_examples=len(KINDS), deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(st.sampled_from(sorted(KINDS)))
def test_any_file_kind(kind):
    try:
        _take_in(KINDS[kind])
    finally:
        while _SOCKETS:
            _SOCKETS.pop().close()


TOKENS = ['"source": [', '"a"  ', '\\"', '\\\\', '"', '[', '{"a":', '"source": ["a" "b"], ', '{"source": "', ' ', '\n']


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(st.lists(st.tuples(st.sampled_from(TOKENS), st.integers(1, 200_000)), min_size=1, max_size=3))
def test_long_runs_of_one_token_stay_linear(runs):
    """Backtracking and quadratic scans show only on long inputs: runs of one token, a few MB."""
    _take_in(lambda p: p.write_text('{"cells": [{' + "".join(token * n for token, n in runs)))


ENCODINGS = {"utf-8": lambda t: t.encode("utf-8"), "utf-8 with a mark": lambda t: codecs.BOM_UTF8 + t.encode("utf-8"),
             "utf-16": lambda t: t.encode("utf-16"),
             "utf-16-le with a mark": lambda t: codecs.BOM_UTF16_LE + t.encode("utf-16-le"),
             "utf-16-be with a mark": lambda t: codecs.BOM_UTF16_BE + t.encode("utf-16-be")}


def _seen(nb_text: str, encode) -> tuple:
    """What the grader sees of the notebook ``nb_text`` saved with ``encode``: its cells, its problems (the
    UTF-16 note aside), and the digest every integrity check compares."""
    from autograder.intake.model import Intake
    from autograder.intake.parse import digest, read_notebook
    tmp = Path(tempfile.mkdtemp(prefix="fuzz-encoding-"))
    try:
        folder = tmp / "submitted" / "ann" / "ch04_attention"
        folder.mkdir(parents=True)
        (folder / f"{NB}.ipynb").write_bytes(encode(nb_text))
        intake = intake_submission(folder / f"{NB}.ipynb", read_course(SOURCE.parents[1], "ch04_attention"), "ann")
        nb, _ = read_notebook(encode(nb_text), NB, Intake())
        return ([(c.index, c.source) for c in intake.cells], intake.problems, nb is not None and digest(nb))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@FUZZ
@given(st.sampled_from(sorted(ENCODINGS)), notebooks | st.builds(lambda: json.loads(REAL)),
       st.text(st.characters(blacklist_categories=("Cs",)), max_size=30))
def test_every_encoding_intake_accepts_is_the_same_notebook(encoding, nb, text):
    """One decoded view: saved in any encoding intake accepts, a notebook gives the grader the same cells,
    the same problems and the same digest (what copy detection compares) as in UTF-8."""
    if isinstance(nb.get("cells"), list) and nb["cells"] and isinstance(nb["cells"][0], dict):
        nb["cells"][0]["source"] = text                        # any text, astral planes included
    nb_text = json.dumps(nb, ensure_ascii=False)
    assert _seen(nb_text, ENCODINGS[encoding]) == _seen(nb_text, ENCODINGS["utf-8"])
