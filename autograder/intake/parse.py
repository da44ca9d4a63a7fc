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
MAX_VALUES = 1_000_000              # JSON values a notebook may hold (a real one: a few thousand); each costs
                                    # the grading process ~100 bytes, outside every sandbox limit
_SOURCE_KEY = re.compile(r'"source"\s*:\s*')
_CHUNK = 1 << 23
_QUOTE, _OPEN, _CLOSE = ord('"'), (ord("["), ord("{")), (ord("]"), ord("}"))
_SEPARATORS = (ord(","), ord(":"))


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


def digest(nb: dict) -> str:
    """sha256 of a parsed notebook's content, whatever its encoding or layout on disk: the JSON written
    canonically (keys sorted, no spaces), the multi-line strings nbformat stores as lists of lines (cell
    sources, output text and data) joined, text in Unicode's NFC form. A BOM, UTF-16, another indentation
    or key order gives the same digest; any change of content does not."""
    text = json.dumps(_joined(nb), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(unicodedata.normalize("NFC", text).encode("utf-8", "surrogatepass")).hexdigest()


def _joined(nb: dict) -> dict:
    cells = nb.get("cells")
    return {**nb, "cells": [_joined_cell(c) for c in cells]} if isinstance(cells, list) else nb


def _joined_cell(cell):
    if not isinstance(cell, dict):
        return cell
    cell = {**cell, "source": _lines(cell["source"])} if "source" in cell else cell
    outputs = cell.get("outputs")
    return {**cell, "outputs": [_joined_output(o) for o in outputs]} if isinstance(outputs, list) else cell


def _joined_output(out):
    if not isinstance(out, dict):
        return out
    out = {**out, "text": _lines(out["text"])} if "text" in out else out
    data = out.get("data")
    return {**out, "data": {k: _lines(v) for k, v in data.items()}} if isinstance(data, dict) else out


def _lines(value):
    """A list of lines as the one string nbformat reads it as; anything else as it is."""
    return "".join(value) if isinstance(value, list) and all(isinstance(v, str) for v in value) else value


def digest_of(raw: bytes) -> str | None:
    """``digest`` of the notebook these bytes hold as intake reads them; None when it is not one."""
    nb, _ = read_notebook(raw, "notebook", Intake())
    return digest(nb) if nb is not None else None


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting outside JSON strings (see ``shape``)."""
    return shape(text)[0]


def shape(text: str) -> tuple[int, int]:
    """(the deepest bracket nesting, at most how many JSON values) outside JSON strings, in linear time,
    without recursion and before anything is materialised.

    Every value but the first of a container follows a comma, and every key a colon or a bracket, so
    opening brackets, commas and colons plus one bound the values (keys included) that ``json.loads``
    would make. Escaped backslashes and then escaped quotes are blanked (left to right, as JSON reads
    them), so every quote left opens or closes a string; marks count only outside strings. No regular
    expression runs over the student's text here: one that can fail would be quadratic on it.
    """
    raw = text.encode("utf-8", "replace").replace(b"\\\\", b"__").replace(b'\\"', b"__")
    depth = deepest = inside = values = 0
    for start in range(0, len(raw), _CHUNK):
        a = np.frombuffer(raw, np.uint8, count=min(_CHUNK, len(raw) - start), offset=start)
        quotes = np.flatnonzero(a == _QUOTE)
        opens, closes = (a == _OPEN[0]) | (a == _OPEN[1]), (a == _CLOSE[0]) | (a == _CLOSE[1])
        at = np.flatnonzero(opens | closes | (a == _SEPARATORS[0]) | (a == _SEPARATORS[1]))
        at = at[(np.searchsorted(quotes, at) + inside) % 2 == 0]            # outside strings
        brackets = at[opens[at] | closes[at]]
        values += int(at.size - np.count_nonzero(closes[at]))              # opens and separators
        if brackets.size:
            levels = np.cumsum(np.where(opens[brackets], 1, -1)) + depth
            deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
        inside = (inside + quotes.size) % 2
        if deepest > MAX_DEPTH or values > MAX_VALUES:
            break                                                            # enough to refuse
    return deepest, values + 1


def parse(text: str, name: str, intake: Intake) -> tuple[dict | None, bool]:
    """(the notebook as a v4 dict or None, whether its code was salvaged from broken JSON).

    Whether it was salvaged is said here, never read from the file: a student cannot claim it.
    """
    depth, values = shape(text)
    if depth > MAX_DEPTH:
        intake.damage(f"{name}.ipynb is not a notebook: its JSON is nested at least {depth} levels deep (a notebook "
                      f"needs about 8, the limit is {MAX_DEPTH}); it was not graded.")
        return None, False
    if values > MAX_VALUES:                                # never materialised: salvage reads it in bounded windows
        return _salvaged(text, name, f"it holds at least {values:,} JSON values, over the limit of {MAX_VALUES:,} "
                         "(a notebook holds a few thousand)", intake, "is too large to read safely"), True
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


def _salvaged(text: str, name: str, why: str, intake: Intake, what: str = "is not valid JSON") -> dict:
    sources = salvage(text)
    intake.damage(f"{name}.ipynb {what} ({why}); code was recovered from {len(sources)} "
                  "cell(s) and graded.")
    return {"nbformat": 4,
            "cells": [{"cell_type": "code", "source": s, "metadata": {}} for s in sources]}


def salvage(text: str) -> list[str]:
    """The sources of broken JSON: each ``"source":`` value that still decodes as text or lines of text.

    Each value is decoded by json's own scanner from where its key ends to where the next key
    begins (linear overall; nesting was bounded before), never by a backtracking regular expression.
    """
    decoder, out, budget = json.JSONDecoder(), [], MAX_VALUES
    starts = [m.end() for m in _SOURCE_KEY.finditer(text)]
    for start, stop in zip(starts, [*starts[1:], len(text)]):
        budget -= text.count(",", start, stop) + 1     # at most the values this window can make
        if budget < 0:
            break
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
