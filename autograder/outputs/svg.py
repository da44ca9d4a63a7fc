"""Small charts as SVG data URIs: no plotting library, milliseconds per chart, crisp at any zoom."""
from __future__ import annotations

import base64
import math
from html import escape

# viridis, sampled at 9 points (0, 1/8, ..., 1)
_VIRIDIS = [(68, 1, 84), (71, 44, 122), (59, 81, 139), (44, 113, 142), (33, 144, 141),
            (39, 173, 129), (92, 200, 99), (170, 220, 50), (253, 231, 37)]
BAR = "#c0504d"
HIST = "#3b6ea8"


def color(v: float) -> str:
    """Viridis colour for v in [0, 1]; grey for NaN."""
    if v is None or not math.isfinite(v):
        return "#bbbbbb"
    x = min(max(v, 0.0), 1.0) * (len(_VIRIDIS) - 1)
    i = min(int(x), len(_VIRIDIS) - 2)
    a, b, t = _VIRIDIS[i], _VIRIDIS[i + 1], x - i
    return "#" + "".join(f"{round(a[k] + (b[k] - a[k]) * t):02x}" for k in range(3))


def data_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def _svg(width: int, height: int, body: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'font-family="sans-serif" font-size="11">{"".join(body)}</svg>')


def _text(x, y, s, anchor="start", size=11, weight="normal") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" '
            f'font-weight="{weight}">{escape(str(s))}</text>')


def _matrix(rows, x0: float, y0: float, cell: float, title: str) -> list[str]:
    out = [_text(x0 + cell * (len(rows[0]) if rows else 1) / 2, y0 - 8, title, "middle", 12, "bold")]
    for i, row in enumerate(rows):
        for j, v in enumerate(row):
            out.append(f'<rect x="{x0 + j * cell:.1f}" y="{y0 + i * cell:.1f}" width="{cell:.1f}" '
                       f'height="{cell:.1f}" fill="{color(v)}"><title>[{i}, {j}] = {v}</title></rect>')
    return out


def heatmaps(student, expected, title: str) -> str:
    """The student's weights beside the expected pattern (0 dark, 1 yellow)."""
    mats = [m if _is_matrix(m) else [[float("nan")]] for m in (student, expected)]
    n = max(max(len(m), len(m[0])) for m in mats)
    cell = max(8.0, min(28.0, 220.0 / n))
    size = cell * n
    body = [_text(10, 16, title, size=12, weight="bold")]
    for k, (m, name) in enumerate(zip(mats, ("your weights", "expected"))):
        body += _matrix(m, 20 + k * (size + 40), 48, cell, name)
    legend_x = 20 + 2 * (size + 40)
    for s in range(11):
        body.append(f'<rect x="{legend_x}" y="{48 + (10 - s) * size / 11:.1f}" width="12" '
                    f'height="{size / 11 + 0.5:.1f}" fill="{color(s / 10)}"/>')
    body += [_text(legend_x + 16, 56, "1"), _text(legend_x + 16, 48 + size, "0"),
             _text(20, 48 + size + 18, "rows: query position i, columns: key position j")]
    return data_uri(_svg(int(legend_x + 40), int(size + 76), body))


def _is_matrix(m) -> bool:
    return isinstance(m, list) and bool(m) and all(isinstance(r, list) and r and len(r) == len(m[0]) for r in m)


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
        body.append(f'<rect x="{left + i * bw:.1f}" y="{h - bottom - bh:.1f}" width="{bw - 1:.1f}" '
                    f'height="{bh:.1f}" fill="{HIST}"><title>{i} points: {c}</title></rect>')
        if i % 5 == 0 or i == max_value:
            body.append(_text(left + (i + 0.5) * bw, h - bottom + 14, i, "middle"))
    body += [_text(w / 2, h - 2, f"total (of {max_value})", "middle"), _text(4, 40, f"{top}"),
             _text(4, h - bottom, "0")]
    return data_uri(_svg(w, h, body))


def bars(labels, values, title: str, xlabel: str) -> str:
    labels, values = list(labels), list(values)
    top = max(values, default=0) or 1
    row, left, w = 18, 230, 620
    h = 50 + row * len(labels)
    body = [_text(w / 2, 16, title, "middle", 13, "bold")]
    for i, (label, v) in enumerate(zip(labels, values)):
        y = 30 + i * row
        bw = (w - left - 60) * v / top
        body += [_text(left - 6, y + 12, label, "end"),
                 f'<rect x="{left}" y="{y + 2}" width="{bw:.1f}" height="{row - 5}" fill="{BAR}"/>',
                 _text(left + bw + 4, y + 12, f"{v:g}" if isinstance(v, int) else f"{v:.0f}")]
    body.append(_text(left + (w - left) / 2, h - 4, xlabel, "middle"))
    return data_uri(_svg(w, h, body))
