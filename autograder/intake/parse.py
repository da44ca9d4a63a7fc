"""Bytes -> a notebook dict, bounded in depth and size; damage is recorded, never raised.

Python's json parser recurses once per nesting level, so a file of a million
``[`` would exhaust the stack. The nesting depth is measured first, without
recursion (strings removed by one regular expression, brackets counted with
numpy in chunks), and a notebook nested deeper than any real one is refused.
"""
from __future__ import annotations

import codecs
import itertools
import json
import re
import warnings

import numpy as np

from .canonical import notebook_digest
from .decoded import MAX_DECODED_BYTES, decoded_size, escapable, narrow_text
from .model import Intake

MAX_DEPTH = 64                      # real notebooks nest about 8 levels
MAX_SALVAGED = 5_000                # cells recovered from broken JSON
MAX_VALUES = 1_000_000              # JSON values a notebook may hold (a real one: a few thousand); each costs
                                    # the grading process ~100 bytes, outside every sandbox limit
_SOURCE_KEY = re.compile(r'"source"\s*:\s*')
_CELL_TYPE = re.compile(r'"cell_type"\s*:\s*"(code|markdown|raw)"')
_CHUNK = 1 << 23
_QUOTE, _OPEN, _CLOSE = ord('"'), (ord("["), ord("{")), (ord("]"), ord("}"))
_SEPARATORS = (ord(","), ord(":"))


def decode(raw: bytes, name: str, intake: Intake) -> str:
    """UTF-8 text; a byte-order mark is dropped, UTF-16 is decoded, other bytes are replaced (damage)."""
    raw = _utf8(raw, name, intake)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        _not_utf8(name, exc.start, intake)
        return raw.decode("utf-8", "replace")


def _utf8(raw: bytes, name: str, intake: Intake) -> bytes:
    """The notebook's bytes as UTF-8 without a byte-order mark (UTF-16 transcoded, with a note)."""
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        intake.note(f"{name}.ipynb was saved as UTF-16; it was read as such (Jupyter saves UTF-8).")
        return raw.decode("utf-16", "replace").encode("utf-8")
    return raw[len(codecs.BOM_UTF8):] if raw.startswith(codecs.BOM_UTF8) else raw


def _not_utf8(name: str, at: int, intake: Intake) -> None:
    intake.damage(f"{name}.ipynb contains bytes that are not UTF-8 (at byte {at}); they were "
                  "replaced and the rest graded.")


def read_notebook(source, name: str, intake: Intake) -> tuple[dict | None, bool]:
    """The one decoded view of a notebook's bytes: decoded as ``decode`` does, parsed as ``parse`` does.
    Grading and every integrity check (copies of classmates, of the course's notebooks) read this.

    ``source``: the bytes, or what holds them once (``take.Taken``: released here, so they are freed as
    soon as they are decoded). What the grading process holds is bounded in bytes: a notebook whose
    decoded text would take over ``decoded.MAX_DECODED_BYTES`` is not decoded, the nesting and size are
    measured on the bytes, and the text is held narrow (``decoded.narrow_text``)."""
    raw = _utf8(source.release() if hasattr(source, "release") else source, name, intake)
    size, width = decoded_size(raw)
    if size > MAX_DECODED_BYTES:
        wide = (" (it holds characters beyond U+FFFF, which Python holds in 4 bytes each)" if width == 4 else
                " (it holds characters beyond U+00FF, which Python holds in 2 bytes each)" if width == 2 else "")
        intake.damage(f"{name}.ipynb would take {size / 1e6:,.0f} MB of the grader's memory once decoded{wide}; the "
                      f"limit is {MAX_DECODED_BYTES / 1e6:.0f} MB, so it was not graded. Clear its outputs and "
                      "resubmit.")
        return None, False
    measured = shape(raw)
    if width == 4 and escapable(raw):
        text, bad = narrow_text(raw)
    else:
        try:
            text, bad = raw.decode("utf-8"), None
        except UnicodeDecodeError as exc:
            text, bad = raw.decode("utf-8", "replace"), exc.start
    if bad is not None:
        _not_utf8(name, bad, intake)
    del raw
    return _parse(text, measured, name, intake)


def digest(nb: dict) -> str:
    """sha256 of a parsed notebook's content, whatever its encoding or layout on disk: the JSON written
    canonically (keys sorted, no spaces), the multi-line strings nbformat stores as lists of lines (cell
    sources, output text and data) joined, text in Unicode's NFC form. A BOM, UTF-16, another indentation
    or key order gives the same digest; any change of content does not. Streamed (``canonical``): no
    copy of the whole notebook is made."""
    return notebook_digest(nb)


def digest_of(raw: bytes) -> str | None:
    """``digest`` of the notebook these bytes hold as intake reads them; None when it is not one."""
    nb, _ = read_notebook(raw, "notebook", Intake())
    return digest(nb) if nb is not None else None


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting outside JSON strings (see ``shape``)."""
    return shape(text)[0]


def shape(text: str | bytes) -> tuple[int, int]:
    """(the deepest bracket nesting, at most how many JSON values) outside JSON strings, in linear time,
    without recursion and before anything is materialised.

    Every value but the first of a container follows a comma, and every key a colon or a bracket, so
    opening brackets, commas and colons plus one bound the values (keys included) that ``json.loads``
    would make. Escaped backslashes and then escaped quotes are blanked (left to right, as JSON reads
    them), so every quote left opens or closes a string; marks count only outside strings. No regular
    expression runs over the student's text here: one that can fail would be quadratic on it.
    """
    raw = text.encode("utf-8", "replace") if isinstance(text, str) else text
    raw = raw.replace(b"\\\\", b"__").replace(b'\\"', b"__")
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
    return _parse(text, shape(text), name, intake)


def _parse(text: str, measured: tuple[int, int], name: str, intake: Intake) -> tuple[dict | None, bool]:
    depth, values = measured
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
    cells = salvaged_cells(text)
    code = sum(kind == "code" for kind, _ in cells)
    rest = f" (of its first {MAX_SALVAGED:,} cells; the rest were not read)" if len(cells) >= MAX_SALVAGED else ""
    recovered = f"code was recovered from {code} cell(s){rest} and graded" if code else \
        "no code could be recovered from it, so it was not graded"
    intake.damage(f"{name}.ipynb {what} ({why}); {recovered}.")
    return {"nbformat": 4, "cells": [{"cell_type": kind, "source": s, "metadata": {}} for kind, s in cells]}


def salvage(text: str) -> list[str]:
    """The sources of broken JSON: each ``"source":`` value that still decodes as text or lines of text."""
    return [source for _, source in salvaged_cells(text)]


def salvaged_cells(text: str) -> list[tuple[str, str]]:
    """(kind, source) of each cell of broken JSON whose ``"source":`` value still decodes as text or lines of
    text; the kind is the ``"cell_type"`` written before it in the same cell ("markdown" and "raw" are never
    run as code; "code" when none is found).

    Each value is decoded by json's own scanner from where its key ends to where the next key
    begins (linear overall; nesting was bounded before), never by a backtracking regular expression.
    """
    decoder, out, budget = json.JSONDecoder(), [], MAX_VALUES
    # at most MAX_SALVAGED cells are kept, so no more source keys are looked for (the next one ends the last
    # window): a million tiny cells cost what 5,000 do, never a list of a million positions
    starts = [m.end() for m in itertools.islice(_SOURCE_KEY.finditer(text), MAX_SALVAGED + 1)]
    kinds = _kinds_before(text, starts)
    stops = [*starts[1:], len(text)]
    starts = starts[:MAX_SALVAGED]
    for start, stop, kind in zip(starts, stops, kinds):
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
            out.append((kind, value))
        if len(out) >= MAX_SALVAGED:
            break
    return out


def _kinds_before(text: str, starts: list[int]) -> list[str]:
    """The last cell type named between each source key and the one before it (one pass over the text)."""
    found = [(m.start(), m.group(1)) for m in _CELL_TYPE.finditer(text, 0, starts[-1] if starts else 0)]
    kinds, i, last = [], 0, "code"
    for prev, start in zip([0, *starts[:-1]], starts):
        last = "code"
        while i < len(found) and found[i][0] < start:
            if found[i][0] >= prev:
                last = found[i][1]
            i += 1
        kinds.append(last)
    return kinds


def _convert(data: dict, name: str, intake: Intake) -> dict | None:
    """A notebook of another nbformat version converted to 4, said in one line that tells what happened: a file
    that names no version and does not convert is JSON but not a notebook (it read "converted to version 4
    and graded", then "could not be converted; it was not graded")."""
    major = data.get("nbformat")
    what = f"uses nbformat {major}" if isinstance(major, int) and not isinstance(major, bool) \
        else "names no nbformat version"
    try:
        import nbformat                                    # only old notebooks need it
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")                # nbformat's warnings about a student's file
            converted = nbformat.reads(json.dumps(data), as_version=4)
    except Exception as exc:  # noqa: BLE001 - any conversion failure
        intake.damage(f"{name}.ipynb {what} and could not be read as a Jupyter notebook ({type(exc).__name__}); "
                      "it was not graded: submit the notebook as Jupyter saved it.")
        return None
    intake.damage(f"{name}.ipynb {what}; it was converted to version 4 and graded.")
    return json.loads(json.dumps(converted))              # plain dicts, as from a v4 file
