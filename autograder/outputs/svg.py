"""Small charts as inline SVG: no plotting library, milliseconds per chart, crisp at any zoom.

The markup goes into the page itself (not an ``<img>``), so each cell's and bar's ``<title>``
is a working tooltip. Every number is formatted here and every text escaped; values from a
student are read as floats and anything else is drawn as NaN. A chart is for every reader: its
``aria-label`` says what its data say (computed from them, not its title alone), each has its data as
a table (``*_table``, which ``html.figure`` puts beside it), and no text of it is under 12 px.
"""
from __future__ import annotations

import math

from .html import escape

# viridis, sampled at 9 points (0, 1/8, ..., 1)
_VIRIDIS = [(68, 1, 84), (71, 44, 122), (59, 81, 139), (44, 113, 142), (33, 144, 141),
            (39, 173, 129), (92, 200, 99), (170, 220, 50), (253, 231, 37)]
NAN_COLOR = "#bbbbbb"
BAR = "#c0504d"
HIST = "#3b6ea8"
LABEL_PX = 7.1          # the widest a character of a 12 px sans-serif label runs, on average (for margins)
SMALLEST = 12           # px: no text of a chart is smaller


def number(v) -> float:
    """A student's value as a float; NaN for anything that is not a real number (None, text, bools)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return math.nan
    return float(v)


def color(v) -> str:
    """Viridis colour for v in [0, 1] (clamped); grey for NaN, infinities and non-numbers."""
    v = number(v)
    if not math.isfinite(v):
        return NAN_COLOR
    x = min(max(v, 0.0), 1.0) * (len(_VIRIDIS) - 1)
    i = min(int(x), len(_VIRIDIS) - 2)
    a, b, t = _VIRIDIS[i], _VIRIDIS[i + 1], x - i
    return "#" + "".join(f"{round(a[k] + (b[k] - a[k]) * t):02x}" for k in range(3))


def number_label(v) -> str:
    v = number(v)
    return "NaN" if math.isnan(v) else f"{v:.4g}"


def _svg(width: float, height: float, body: list[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{int(width)}" height="{int(height)}" '
            f'viewBox="0 0 {int(width)} {int(height)}" role="img" aria-label="{escape(label)}" '
            f'font-family="sans-serif" font-size="{SMALLEST}">{"".join(body)}</svg>')


def _text(x, y, s, anchor="start", size=SMALLEST, weight="normal", rotate: bool = False) -> str:
    turn = f' transform="rotate(-90 {x:.1f} {y:.1f})"' if rotate else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" '
            f'font-weight="{weight}"{turn}>{escape(str(s))}</text>')


def _rect(x, y, w, h, fill, tip: str | None = None) -> str:
    inner = f"<title>{escape(tip)}</title>" if tip else ""
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{fill}">{inner}</rect>'


def _ticks(count: int) -> range:
    """Indices to label along an axis: every one up to 12, else every 2nd, 5th, 10th, 20th, ... (at most 12)."""
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, count) if count <= 12 * s)
    return range(0, count, step)


def _grid(rows, x0: float, y0: float, cell: float, name: str) -> list[str]:
    out = [_text(x0 + cell * len(rows[0]) / 2, y0 - 22, name, "middle", 13, "bold")]
    out += [_text(x0 + (j + 0.5) * cell, y0 - 6, j, "middle") for j in _ticks(len(rows[0]))]
    out += [_text(x0 - 5, y0 + (i + 0.5) * cell + 4, i, "end") for i in _ticks(len(rows))]
    for i, row in enumerate(rows):
        for j, v in enumerate(row):
            out.append(_rect(x0 + j * cell, y0 + i * cell, cell, cell, color(v),
                             f"row {i}, column {j}: {number_label(v)}"))
    return out


def _legend(x: float, y: float, height: float) -> list[str]:
    """Colour bar from 0 (bottom) to 1 (top), then a grey swatch for NaN."""
    step = height / 10
    out = [_rect(x, y + (9 - s) * step, 12, step + 0.5, color((s + 0.5) / 10)) for s in range(10)]
    out += [_text(x + 16, y + 4, "1"), _text(x + 16, y + height / 2 + 4, "0.5"), _text(x + 16, y + height, "0"),
            _rect(x, y + height + 10, 12, 12, NAN_COLOR, "NaN: not a number"),
            _text(x + 16, y + height + 20, "NaN")]
    return out


def _matrix(m) -> list[list]:
    ok = isinstance(m, list) and bool(m) and all(isinstance(r, list) and r and len(r) == len(m[0]) for r in m)
    return m if ok else [[math.nan]]


def heatmaps(student, expected, title: str) -> str:
    """The student's weights beside the expected pattern (0 dark, 1 yellow, NaN grey)."""
    mats = [_matrix(m) for m in (student, expected)]
    n = max(max(len(m), len(m[0])) for m in mats)
    cell = max(8.0, min(28.0, 220.0 / n))
    size, top, left, gap = cell * n, 62, 40, 46
    body = [_text(10, 16, title, size=13, weight="bold")]
    for k, (m, name) in enumerate(zip(mats, ("your weights", "expected"))):
        body += _grid(m, left + k * (size + gap), top, cell, name)
    legend_x, legend_h = left + 2 * (size + gap) - 16, max(size, 100.0)
    body += _legend(legend_x, top, legend_h)
    body += [_text(14, top + size / 2, "query position i", "middle", rotate=True),
             _text(left, top + size + 18, "columns: key position j; every value is in the table below")]
    return _svg(legend_x + 50, top + max(size + 28, legend_h + 30), body, f"{title}: {heatmap_words(*mats)}")


def heatmap_words(student: list, expected: list) -> str:
    """What the two heatmaps show, in words: their size, where they differ most, and weight in the future."""
    rows, cols = len(student), len(student[0])
    words = f"your weights, a {rows} by {cols} matrix, beside the expected one"
    if (len(expected), len(expected[0])) != (rows, cols):
        return words + f", a {len(expected)} by {len(expected[0])} matrix"
    gaps = [(abs(number(a) - number(b)) if math.isfinite(number(a)) else math.inf, i, j, a, b)
            for i, (sr, er) in enumerate(zip(student, expected)) for j, (a, b) in enumerate(zip(sr, er))]
    differ = [g for g in gaps if not g[0] <= 0.01]
    if not differ:
        return words + "; they agree everywhere (to 0.01)"
    _, i, j, a, b = max(differ, key=lambda g: (g[0], -g[1], -g[2]))
    words += (f"; {len(differ)} of {rows * cols} values differ by more than 0.01, the most at row {i}, column {j} "
              f"(yours {number_label(a)}, expected {number_label(b)})")
    future = [g for g in gaps if g[2] > g[1] and number(g[4]) == 0 and number(g[3]) != 0]
    if future and all(number(b) == 0 for _, i, j, _, b in gaps if j > i):
        words += f"; {len(future)} value{'s' if len(future) != 1 else ''} above the diagonal (a query's future) " \
                 "hold weight where the expected has none"
    return words


def heatmap_table(student, expected) -> tuple[list[str], list[list[str]]]:
    """The two heatmaps' values, one row per query position: "yours / expected" for each key position."""
    mats = [_matrix(m) for m in (student, expected)]
    cols = max(len(m[0]) for m in mats)
    cell = lambda m, i, j: number_label(m[i][j]) if i < len(m) and j < len(m[i]) else "-"   # noqa: E731
    rows = [[f"query {i}", *(f"{cell(mats[0], i, j)} / {cell(mats[1], i, j)}" for j in range(cols))]
            for i in range(max(len(m) for m in mats))]
    return ["yours / expected", *(f"key {j}" for j in range(cols))], rows


def histogram(values, max_value: int, title: str = "Score distribution") -> str:
    counts = [0] * (max_value + 1)
    for v in values:
        counts[min(max(int(round(v)), 0), max_value)] += 1
    top = max(counts) or 1
    w, h, left, bottom = 560, 220, 40, 30
    bw = (w - left - 10) / len(counts)
    body = [_text(w / 2, 16, title, "middle", 13, "bold")]
    for i, c in enumerate(counts):
        bh = (h - bottom - 30) * c / top
        body.append(_rect(left + i * bw, h - bottom - bh, bw - 1, bh, HIST,
                          f"{i} points: {c} student{'s' if c != 1 else ''}"))
        if i % 5 == 0 or i == max_value:
            body.append(_text(left + (i + 0.5) * bw, h - bottom + 14, i, "middle"))
    body += [_text(w / 2, h - 2, f"total (of {max_value})", "middle"), _text(4, 40, f"{top}"),
             _text(4, h - bottom, "0")]
    return _svg(w, h, body, f"{title}: {histogram_words(values, max_value)}")


def histogram_words(values, max_value: int) -> str:
    """The distribution in words: how many, the range, the median and the commonest score."""
    values = sorted(values)
    if not values:
        return "no scores"
    counts = {v: values.count(v) for v in values}
    common = max(counts, key=lambda v: (counts[v], v))
    middle = values[len(values) // 2] if len(values) % 2 else (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2
    return (f"{len(values)} student{'s' if len(values) != 1 else ''}, totals from {values[0]:g} to {values[-1]:g} of "
            f"{max_value}, median {middle:g}; the commonest {common:g} ({counts[common]} student"
            f"{'s' if counts[common] != 1 else ''})")


def histogram_table(values) -> tuple[list[str], list[list[str]]]:
    """Each total a student has, and how many have it."""
    values = sorted(values)
    return ["total", "students"], [[f"{v:g}", str(values.count(v))] for v in dict.fromkeys(values)]


def bars(labels, values, title: str, xlabel: str, unit: str = "", top: float | None = None) -> str:
    """Horizontal bars in the order given, each labelled with its value and ``unit`` (e.g. "%"); a full
    bar is ``top`` (default: the largest value)."""
    labels, values = list(labels), list(values)
    top = top or max(values, default=0) or 1
    row = 18
    left = min(max(LABEL_PX * max((len(str(s)) for s in labels), default=0) + 12, 120), 480)   # room for the labels
    w = left + 400
    h = 50 + row * len(labels)
    body = [_text(w / 2, 16, title, "middle", 13, "bold")]
    for i, (label, v) in enumerate(zip(labels, values)):
        y, bw = 30 + i * row, (w - left - 60) * v / top
        value = _value(v, unit)
        body += [_text(left - 6, y + 12, label, "end"), _rect(left, y + 2, bw, row - 5, BAR, f"{label}: {value}"),
                 _text(left + bw + 4, y + 12, value)]
    body.append(_text(left + (w - left) / 2, h - 4, xlabel, "middle"))
    return _svg(w, h, body, f"{title}: {bar_words(labels, values, unit)}")


def _value(v, unit: str) -> str:
    return f"{v:.0f}{unit}" if isinstance(v, float) else f"{v}{unit}"


def bar_words(labels, values, unit: str = "", shown: int = 5) -> str:
    """The bars in words, in their order: the first ``shown`` with their values, then how many more."""
    pairs = [f"{label} {_value(v, unit)}" for label, v in zip(labels, values)]
    more = f", and {len(pairs) - shown} more" if len(pairs) > shown else ""
    return "; ".join(pairs[:shown]) + more if pairs else "none"


def bar_table(labels, values, xlabel: str, unit: str = "") -> tuple[list[str], list[list[str]]]:
    return ["", xlabel], [[str(label), _value(v, unit)] for label, v in zip(labels, values)]
