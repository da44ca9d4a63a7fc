"""A notebook's bytes to text, bounded in the bytes the grading process holds, not in characters.

Python holds a string at 1, 2 or 4 bytes a character, by its widest character: one long string with a
single character beyond U+FFFF (an emoji) costs 4 bytes for each of its characters, and the text of a
whole notebook decoded at once is one such string. So the size the decoded notebook will take is
measured on the bytes first (``decoded_size``: characters times the width Python will need), and a
notebook over ``MAX_DECODED_BYTES`` is refused before anything is decoded. A notebook that holds wide
characters is decoded with each non-ASCII character written as JSON's own ``\\uXXXX`` escape (the
same JSON value, what nbformat itself may write), so the document is held at 1 byte a character and
only the string values that hold such characters are wide, once, in the parsed notebook.
"""
from __future__ import annotations

import codecs

import numpy as np

MAX_DECODED_BYTES = 256 << 20        # the parsed strings of one notebook, as Python holds them
_CHUNK = 1 << 20


def decoded_size(raw: bytes) -> tuple[int, int]:
    """(the bytes the text of UTF-8 ``raw`` takes as one Python string, the bytes per character), counted on
    the bytes without decoding them: characters are the bytes that do not continue a sequence."""
    chars, widest = 0, 0
    for start in range(0, len(raw), _CHUNK):
        a = np.frombuffer(raw, np.uint8, count=min(_CHUNK, len(raw) - start), offset=start)
        chars += int(np.count_nonzero((a & 0xC0) != 0x80))
        top = int(a.max()) if a.size else 0
        widest = max(widest, 4 if top >= 0xF0 else 2 if top >= 0xC4 else 1)
    return chars * max(widest, 1), max(widest, 1)


def _escape(error: UnicodeEncodeError):
    """Each character that is not ASCII as JSON writes it: ``\\uXXXX``, a surrogate pair beyond U+FFFF."""
    out = []
    for ch in error.object[error.start:error.end]:
        code = ord(ch)
        if code > 0xFFFF:
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out), error.end


codecs.register_error("autograder-json-escape", _escape)


def escapable(raw: bytes) -> bool:
    """Whether writing each non-ASCII character as an escape keeps the JSON what it was: not when a
    backslash stands right before one (``"\\é"`` is broken JSON, ``"\\\\u00e9"`` would not be)."""
    for start in range(0, max(len(raw) - 1, 0), _CHUNK):
        a = np.frombuffer(raw, np.uint8, count=min(_CHUNK + 1, len(raw) - start), offset=start)
        if np.any((a[:-1] == 0x5C) & (a[1:] >= 0x80)):
            return False
    return True


def narrow_text(raw: bytes) -> tuple[str, int | None]:
    """(UTF-8 ``raw`` as text whose every character is ASCII, the rest written as JSON escapes chunk by
    chunk, so no wide copy of the whole notebook is made; about where the first byte that is not UTF-8
    stands, replaced, or None)."""
    try:
        return _narrow(raw, "strict"), None
    except UnicodeDecodeError as exc:
        return _narrow(raw, "replace"), exc.start


def _narrow(raw: bytes, errors: str) -> str:
    decoder, parts, start = codecs.getincrementaldecoder("utf-8")(errors), [], 0
    while True:
        final = start + _CHUNK >= len(raw)
        try:
            piece = decoder.decode(raw[start:start + _CHUNK], final=final)
        except UnicodeDecodeError as exc:
            raise UnicodeDecodeError(exc.encoding, exc.object, start + exc.start, start + exc.end,
                                     exc.reason) from None
        parts.append(piece.encode("ascii", "autograder-json-escape"))
        if final:
            break
        start += _CHUNK
    joined = b"".join(parts)
    parts.clear()
    return joined.decode("ascii")
