"""Bytes -> a notebook dict, bounded in depth and size; damage is recorded, never raised.

Python's json parser recurses once per nesting level, so a file of a million
``[`` would exhaust the stack. The nesting depth is measured first, without
recursion (strings removed by one regular expression, brackets counted with
numpy in chunks), and a notebook nested deeper than any real one is refused.
"""
from __future__ import annotations

import codecs
import json
import re
import warnings

import numpy as np

from .model import Intake

MAX_DEPTH = 64                      # real notebooks nest about 8 levels
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_SOURCE_RE = re.compile(r'"source"\s*:\s*(\[(?:\s*"(?:[^"\\]|\\.)*"\s*,?)*\s*\]|"(?:[^"\\]|\\.)*")', re.S)
_CHUNK = 1 << 23
_OPEN, _CLOSE = (ord("["), ord("{")), (ord("]"), ord("}"))


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


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting outside JSON strings, computed without recursion."""
    skeleton = _STRING.sub("", text).encode("utf-8", "replace")
    depth = deepest = 0
    for start in range(0, len(skeleton), _CHUNK):
        a = np.frombuffer(skeleton, np.uint8, count=min(_CHUNK, len(skeleton) - start), offset=start)
        steps = np.zeros(a.shape, np.int32)
        for code in _OPEN:
            steps += a == code
        for code in _CLOSE:
            steps -= a == code
        levels = np.cumsum(steps, dtype=np.int64) + depth
        deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
    return deepest


def parse(text: str, name: str, intake: Intake) -> tuple[dict | None, bool]:
    """(the notebook as a v4 dict or None, whether its code was salvaged from broken JSON).

    Whether it was salvaged is said here, never read from the file: a student cannot claim it.
    """
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        intake.damage(f"{name}.ipynb is not a notebook: its JSON is nested {depth} levels deep (a notebook "
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
    out = []
    for match in _SOURCE_RE.finditer(text):
        try:
            value = json.loads(match.group(1))
        except ValueError:
            continue
        out.append("".join(value) if isinstance(value, list) else str(value))
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
