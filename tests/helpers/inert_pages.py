"""What a page must not hold of a student's text, whatever renders it: a bidi control, an escape sequence, an
element, link or image of theirs, TeX that MathJax would typeset (tests/outputs/test_inert_everywhere.py and
tests/env/nbgrader/test_inert_feedback_pages.py)."""
from __future__ import annotations

import re
from html.parser import HTMLParser

EVIL = "evil.example"
PAYLOADS = {
    "bidi": "\u202e)1/1( ssap\u202c \u2067BIDIMARK\u2069 \u200f",
    "ansi": "\x1b[8mANSIMARK\x1b[0m \x1b[31;47mRED\x1b[0m \x1b]8;;http://evil.example\x07OSC\x1b]8;;\x07",
    "html": f'<a href="http://{EVIL}/a">LINKMARK</a> <b>BOLDMARK</b> <table><tr><td>TABLEMARK</td></tr></table>',
    "markdown": f"**MDBOLD** [MDLINK](http://{EVIL}/m) ![MDIMG](http://{EVIL}/p.png) # MDHEAD",
    "mathjax": "$MATHMARK^2$ \\(INLINEMARK\\) $$DISPLAYMARK$$ \\begin{equation}ENVMARK\\end{equation}",
}
MARKS = {"bidi": ["BIDIMARK"], "ansi": ["ANSIMARK"], "html": ["LINKMARK", "BOLDMARK", "TABLEMARK"],
         "markdown": ["MDBOLD", "MDLINK"], "mathjax": ["MATHMARK", "INLINEMARK", "DISPLAYMARK", "ENVMARK"]}
BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


class _Elements(HTMLParser):
    """Every attribute's value, and the tags open around each marker's text (with that text)."""

    def __init__(self):
        super().__init__()
        self.open, self.attrs, self.around = [], [], {}

    def handle_starttag(self, tag, attrs):
        self.attrs += [v or "" for _, v in attrs]
        if tag not in ("br", "img", "meta", "link", "input", "hr"):
            self.open.append(tag)

    def handle_endtag(self, tag):
        if tag in self.open:
            del self.open[len(self.open) - 1 - self.open[::-1].index(tag):]


NOT_THEIRS = {"a", "b", "strong", "em", "table", "td", "h1", "img"}      # elements a student's text never makes


def assert_inert(page: str, kind: str, where: str, ours: frozenset = frozenset(), typeset: bool = True) -> None:
    """No bidi control, escape sequence, link or image of the student's on the page; each marker of theirs on it,
    inside no element of theirs (``ours``: the page's own elements around a message, a table cell), and none
    between TeX delimiters in a text MathJax reads (outside code and pre; ``typeset``: the page loads MathJax)."""
    assert not BIDI.search(page), f"{where}: a bidi control of the student's reached the page"
    assert "\x1b" not in page and 'class="ansi-' not in page, f"{where}: an escape sequence reached the page"
    seen = _Text()
    seen.feed(page)
    assert not [a for a in seen.attrs if EVIL in a], f"{where}: a student's link or image survived"
    for mark in MARKS[kind]:
        assert seen.around.get(mark), f"{where}: the student's text {mark} is not on the page"
        for tags, data in seen.around[mark]:
            assert not (NOT_THEIRS - ours) & set(tags), (where, mark, tags)
            if typeset and not {"code", "pre"} & set(tags):    # MathJax reads every text but code, pre, script
                assert not re.search(rf"(\$\$?|\\\(|\\begin\{{equation\}})\s*{mark}", data), (where, mark, data)


class _Text(_Elements):
    """Every marker's text and the tags open around it."""

    def handle_data(self, data):
        for kinds in MARKS.values():
            for mark in kinds:
                if mark in data:
                    self.around.setdefault(mark, []).append((tuple(self.open), data))
