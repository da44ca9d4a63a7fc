"""The content digest of a parsed notebook, streamed: the canonical JSON is hashed piece by piece.

The canonical form (``parse.digest``): the JSON written with keys sorted and no spaces, the multi-line
strings nbformat stores as lists of lines (cell sources, output text and data) joined, in Unicode's NFC
form, as UTF-8. Writing it whole would copy the notebook three times (the text, its NFC form, its bytes),
each at the width of its widest character; here a string is cut in slices of about ``_SLICE``
characters. NFC of the whole is NFC of the pieces because each piece normalised on its own begins with
an ASCII character, which never composes with what stands before it; a piece that begins otherwise
(the next line of a list of lines) is normalised with the one before it.
"""
from __future__ import annotations

import hashlib
import json
import re
import unicodedata

_SLICE = 1 << 16
_ASCII = re.compile(r"[\x00-\x7f]")
_escape = json.encoder.encode_basestring          # as json.dumps(ensure_ascii=False) writes a string


def notebook_digest(nb) -> str:
    """Pieces are hashed together about ``_SLICE`` characters at a time (a cell of 200,000 short lines was
    200,000 normalisations and hash updates), cut only before a piece that begins with ASCII."""
    h, pending, size = hashlib.sha256(), [], 0
    for piece in _value(nb, "notebook"):
        if size >= _SLICE and piece and piece[0] <= "\x7f":     # nothing composes across this cut
            _update(h, pending)
            pending, size = [], 0
        pending.append(piece)
        size += len(piece)
    _update(h, pending)
    return h.hexdigest()


def _update(h, pieces: list[str]) -> None:
    if pieces:
        h.update(unicodedata.normalize("NFC", "".join(pieces)).encode("utf-8", "surrogatepass"))


def _value(value, where: str = ""):
    """The canonical JSON of ``value`` in pieces; ``where``: what the value is, for the lists of lines to join
    ("notebook": its cells; "cell": its source and outputs; "output": its text and data)."""
    if isinstance(value, str):
        yield from _string((value,))
    elif isinstance(value, dict):
        yield from _object(value, where)
    elif isinstance(value, list):
        yield "["
        for i, item in enumerate(value):
            if i:
                yield ","
            yield from _value(item, {"cells": "cell", "outputs": "output"}.get(where, ""))
        yield "]"
    else:
        yield json.dumps(value)                      # numbers, true, false, null: short


def _object(obj: dict, where: str):
    yield "{"
    for i, key in enumerate(sorted(obj)):
        if i:
            yield ","
        yield from _string((key,))
        yield ":"
        item = obj[key]
        if _joined(where, key) and isinstance(item, list) and all(isinstance(v, str) for v in item):
            yield from _string(item)                  # a list of lines: the one string nbformat reads
        elif where == "output" and key == "data" and isinstance(item, dict):
            yield from _object(item, "data")
        else:
            yield from _value(item, _INNER.get((where, key), ""))
    yield "}"


_INNER = {("notebook", "cells"): "cells", ("cell", "outputs"): "outputs"}


def _joined(where: str, key: str) -> bool:
    return (where == "cell" and key == "source") or (where == "output" and key == "text") or where == "data"


def _string(parts):
    """The JSON string of the parts joined, escaped a slice at a time (each slice cut before an ASCII
    character, so NFC stays exact)."""
    yield '"'
    for part in _grouped(parts):
        start = 0
        while start < len(part):
            stop = start + _SLICE
            if stop < len(part):
                found = _ASCII.search(part, stop)
                stop = found.start() if found else len(part)
            yield _escape(part[start:stop])[1:-1]
            start = stop
    yield '"'


def _grouped(parts):
    """``parts`` joined about ``_SLICE`` characters at a time (escaping is character by character: the
    same JSON), so a list of many short lines is escaped in a few calls."""
    group, size = [], 0
    for part in parts:
        group.append(part)
        size += len(part)
        if size >= _SLICE:
            yield "".join(group)
            group, size = [], 0
    if group:
        yield "".join(group)
