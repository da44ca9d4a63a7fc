"""A tiny, dependency-free page skeleton shared by the feedback pages and the report.

Every text on a page goes through ``escape``: HTML-escaped, and every character a person could not
see (a bidi override that reorders a name, a zero-width space) shown as an escape (``inert.visible``).
"""
from __future__ import annotations

import html
import re

from ..inert import visible

_CODE = re.compile(r"`([^`\n]{1,200})`")       # Markdown inline code, as the messages write it

STYLE = """
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%;margin:1rem 0}th,td{border:1px solid #ccc;padding:.35rem .5rem;
text-align:left;vertical-align:top}th{background:#f3f3f3}.pass{color:#1a7f37}.fail{color:#b42318}
code{background:#f0f0f0;border-radius:3px;padding:0 .2rem;font-size:.92em}
.tag{background:#fff3cd;border-radius:4px;padding:0 .3rem;font-family:monospace}pre{background:#f6f8fa;
padding:.6rem;overflow:auto;max-height:24rem;white-space:pre-wrap}.review{background:#fde8e8;padding:.6rem}
figure.chart{margin:1rem 0;overflow-x:auto}figure.chart svg{max-width:100%;height:auto}
table{display:block;overflow-x:auto}td{overflow-wrap:break-word}h1,p,li{overflow-wrap:anywhere}
"""


def escape(text: object, quote: bool = True) -> str:
    """``text`` for a page: hidden characters visible (``inert.visible``), then HTML-escaped."""
    return html.escape(visible(text), quote)


def page(title: str, body: str) -> str:
    """A whole page, its content in a ``<main>`` landmark (where a screen reader's user jumps to)."""
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title><style>{STYLE}</style></head>\n<body>\n<main>\n"
            f"<h1>{escape(title)}</h1>\n{body}\n</main>\n</body></html>\n")


def table(headers, rows) -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>\n" for row in rows)
    return f"<table><tr>{head}</tr>\n{body}</table>"


def figure(svg_markup: str, data: tuple[list[str], list[list[str]]]) -> str:
    """An inline SVG chart (made by ``svg``, which escapes every text in it), so its tooltips work, with its
    data as a table beside it (``data``: headers and rows of plain text, from ``svg``'s ``*_table``), which a
    keyboard opens and a screen reader reads: no value is only in a colour or a tooltip."""
    headers, rows = data
    values = table(headers, ([escape(c) for c in row] for row in rows))
    return (f'<figure class="chart">{svg_markup}<figcaption><details class="chart-data"><summary>The chart\'s '
            f"values as a table</summary>{values}</details></figcaption></figure>")


def message(text: str) -> str:
    """A message as HTML: escaped first (student text in it stays inert), then each `inline code` span
    of the message, already escaped, in <code>. An unpaired backtick stays a backtick."""
    return _CODE.sub(lambda m: f"<code>{m.group(1)}</code>", escape(text))
