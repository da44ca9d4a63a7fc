"""Make text from a submission inert before it reaches a terminal, a spreadsheet or a JSON reader.

Student ids, file names, exception text and printed output are all chosen by a
student. On a terminal, escape sequences can clear the screen, move the cursor
or rewrite a line, and a newline can fake a table row; in a spreadsheet, a cell
that starts with ``=`` runs as a formula; in JSON, ``NaN`` is not JSON.
"""
from __future__ import annotations

import math
import re

# ESC sequences: CSI (ESC [ ... final), OSC/DCS/APC/PM/SOS strings (ended by BEL or ST), other 2-byte ones.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]?|\x1b[\]PX^_].*?(?:\x07|\x1b\\|$)|\x1b[ -~]?|\x9b[0-?]*[ -/]*[@-~]?",
                      re.S)
# C0 except tab and newline, DEL, C1, and the bidirectional overrides that reorder what is shown.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_CSV_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


_SURROGATES = re.compile("[\ud800-\udfff]")


def visible_bytes(text: str) -> str:
    """Undecodable bytes (kept by Python as lone surrogates, e.g. from a non-UTF-8 file name) shown as
    ``\\xff``: a surrogate cannot be written to a strict UTF-8 stream, and its byte may be a C1 control."""
    return _SURROGATES.sub(lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}" if ord(m.group()) >= 0xDC80
                           else f"\\u{ord(m.group()):04x}", text)


def terminal(text: object) -> str:
    """``text`` with escape sequences and control characters removed (newlines and tabs kept)."""
    return _CONTROLS.sub("", _ESCAPES.sub("", visible_bytes(str(text))))


def one_line(text: object) -> str:
    """``terminal(text)`` on a single line: a student's newline can never start a fake row."""
    return " ".join(terminal(text).split())


def shown(name: object, limit: int = 80) -> str:
    """A student-chosen name for a message: quoted, escapes visible, at most ``limit`` characters."""
    text = visible_bytes(str(name))
    text = _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text.replace("\x1b", "\\x1b"))
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"'{text}'"


def csv_cell(value: object) -> object:
    """A CSV value a spreadsheet shows as text: strings that could start a formula get a leading quote.

    Numbers the grader computed stay numbers; every string (a student id is a string even when it
    looks like ``-5``) that starts with ``= + - @``, a tab or a carriage return is prefixed with ``'``.
    Control characters are then removed: a bare carriage return would start a new row in a spreadsheet.
    """
    if isinstance(value, str):
        quote = "'" if value.startswith(_FORMULA_START) else ""
        return quote + _CSV_CONTROLS.sub("", visible_bytes(value))
    return value


def json_safe(value: object) -> object:
    """``value`` with every non-finite float replaced by None, so ``json.dumps(allow_nan=False)`` works."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value
