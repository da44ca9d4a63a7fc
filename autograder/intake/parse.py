"""Bytes -> a notebook dict, bounded in depth and size; damage is recorded, never raised.

Python's json parser recurses once per nesting level, so a file of a million
``[`` would exhaust the stack. The nesting depth is measured first, without
recursion (strings removed by one regular expression, brackets counted with
numpy in chunks), and a notebook nested deeper than any real one is refused.
"""
from __future__ import annotations

import codecs
import hashlib
import json
import re
import unicodedata
import warnings

import numpy as np

from .model import Intake

MAX_DEPTH = 64                      # real notebooks nest about 8 levels
MAX_SALVAGED = 5_000                # cells recovered from broken JSON
_SOURCE_KEY = re.compile(r'"source"\s*:\s*')
_CHUNK = 1 << 23
_QUOTE, _OPEN, _CLOSE = ord('"'), (ord("["), ord("{")), (ord("]"), ord("}"))


def decode(raw: bytes, name: str, intake: Intake) -> str:
    """UTF-8 text; a byte-order mark is dropped, UTF-16 is decoded, other bytes are replaced (damage)."""
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        intake.note(f"{name}.ipynb was saved as UTF-16; it was read as such (Jupyter saves UTF-8).")
        return raw.decode("utf-16", "replace")
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        intake.damage(f"{name}.ipynb contains bytes that are not UTF-8 (at byte {exc.start}); they were "
                      "replaced and the rest graded.")
        return raw.decode("utf-8", "replace")


def read_notebook(raw: bytes, name: str, intake: Intake) -> tuple[dict | None, bool]:
    """The one decoded view of a notebook's bytes: decoded as ``decode`` does, parsed as ``parse`` does.
    Grading and every integrity check (copies of classmates, of the course's notebooks) read this."""
    return parse(decode(raw, name, intake), name, intake)


_JOINED = ("source", "text")                    # nbformat stores these as one string or a list of lines


def digest(nb: dict) -> str:
    """sha256 of a parsed notebook's content, whatever its encoding or layout on disk: the JSON written
    canonically (keys sorted, no spaces), multi-line strings joined, text in Unicode's NFC form. A BOM,
    UTF-16, another indentation or key order gives the same digest; any change of content does not."""
    text = json.dumps(_joined(nb), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(unicodedata.normalize("NFC", text).encode("utf-8", "surrogatepass")).hexdigest()


def _joined(value, key: str = ""):
    if isinstance(value, dict):
        return {k: _joined(v, "text" if key == "data" else k) for k, v in value.items()}
    if isinstance(value, list):
        if key in _JOINED and all(isinstance(v, str) for v in value):
            return "".join(value)
        return [_joined(v) for v in value]
    return value


def digest_of(raw: bytes) -> str | None:
    """``digest`` of the notebook these bytes hold as intake reads them; None when it is not one."""
    nb, _ = read_notebook(raw, "notebook", Intake())
    return digest(nb) if nb is not None else None


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting outside JSON strings, in linear time and without recursion.

    Escaped backslashes and then escaped quotes are blanked (left to right, as JSON reads them),
    so every quote left opens or closes a string; brackets count only outside strings. No regular
    expression runs over the student's text here: one that can fail would be quadratic on it.
    """
    raw = text.encode("utf-8", "replace").replace(b"\\\\", b"__").replace(b'\\"', b"__")
    depth = deepest = inside = 0
    for start in range(0, len(raw), _CHUNK):
        a = np.frombuffer(raw, np.uint8, count=min(_CHUNK, len(raw) - start), offset=start)
        quotes = np.flatnonzero(a == _QUOTE)
        at = np.flatnonzero((a == _OPEN[0]) | (a == _OPEN[1]) | (a == _CLOSE[0]) | (a == _CLOSE[1]))
        at = at[(np.searchsorted(quotes, at) + inside) % 2 == 0]            # outside strings
        if at.size:
            levels = np.cumsum(np.where((a[at] == _OPEN[0]) | (a[at] == _OPEN[1]), 1, -1)) + depth
            deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
        inside = (inside + quotes.size) % 2
        if deepest > MAX_DEPTH:
            break                                                            # deep enough to refuse
    return deepest


def parse(text: str, name: str, intake: Intake) -> tuple[dict | None, bool]:
    """(the notebook as a v4 dict or None, whether its code was salvaged from broken JSON).

    Whether it was salvaged is said here, never read from the file: a student cannot claim it.
    """
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        intake.damage(f"{name}.ipynb is not a notebook: its JSON is nested at least {depth} levels deep (a notebook "
                      f"needs about 8, the limit is {MAX_DEPTH}); it was not graded.")
        return None, False
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return _salvaged(text, name, str(exc)[:120], intake), True
    if not isinstance(data, dict):
        intake.damage(f"{name}.ipynb is not a notebook (its JSON is {type(data).__name__}, not an object); "
                      "it was not graded.")
        return None, False
    if data.get("nbformat") != 4:
        return _convert(data, name, intake), False
    return data, False


def _salvaged(text: str, name: str, why: str, intake: Intake) -> dict:
    sources = salvage(text)
    intake.damage(f"{name}.ipynb is not valid JSON ({why}); code was recovered from {len(sources)} "
                  "cell(s) and graded.")
    return {"nbformat": 4,
            "cells": [{"cell_type": "code", "source": s, "metadata": {}} for s in sources]}


def salvage(text: str) -> list[str]:
    """The sources of broken JSON: each ``"source":`` value that still decodes as text or lines of text.

    Each value is decoded by json's own scanner from where its key ends to where the next key
    begins (linear overall; nesting was bounded before), never by a backtracking regular expression.
    """
    decoder, out = json.JSONDecoder(), []
    starts = [m.end() for m in _SOURCE_KEY.finditer(text)]
    for start, stop in zip(starts, [*starts[1:], len(text)]):
        try:                                           # one value per window: an error costs its window only
            value, _ = decoder.raw_decode(text[start:stop])
        except (ValueError, RecursionError):
            continue
        if isinstance(value, list) and all(isinstance(line, str) for line in value):
            value = "".join(value)
        if isinstance(value, str):
            out.append(value)
        if len(out) >= MAX_SALVAGED:
            break
    return out


def _convert(data: dict, name: str, intake: Intake) -> dict | None:
    major = data.get("nbformat")
    shown = major if isinstance(major, int) and not isinstance(major, bool) else "unknown"
    intake.damage(f"{name}.ipynb uses nbformat {shown}; it was converted to version 4 and graded.")
    try:
        import nbformat                                    # only old notebooks need it
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")                # nbformat's warnings about a student's file
            converted = nbformat.reads(json.dumps(data), as_version=4)
    except Exception as exc:  # noqa: BLE001 - any conversion failure
        intake.damage(f"{name}.ipynb could not be converted ({type(exc).__name__}); it was not graded.")
        return None
    return json.loads(json.dumps(converted))              # plain dicts, as from a v4 file
