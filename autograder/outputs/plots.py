"""Small matplotlib figures rendered to inline PNG data URIs (Agg, no display needed)."""
from __future__ import annotations

import base64
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def heatmaps(student, expected, title: str) -> str:
    """The student's weights beside the expected pattern."""
    fig, axes = plt.subplots(1, 2, figsize=(6.4, 2.9))
    images = []
    for ax, data, name in ((axes[0], student, "your weights"), (axes[1], expected, "expected")):
        arr = np.asarray(data, dtype=float)
        if arr.ndim == 2 and arr.size:
            images.append(ax.imshow(np.nan_to_num(arr, nan=-0.1), cmap="viridis", vmin=0, vmax=1))
            ax.set_xlabel("key j")
            ax.set_ylabel("query i")
        else:
            ax.text(0.5, 0.5, "not a 2-D array", ha="center", va="center")
            ax.set_axis_off()
        ax.set_title(name)
    if images:
        fig.colorbar(images[0], ax=list(axes), shrink=0.8)
    fig.suptitle(title)
    return _png(fig)


def histogram(totals, max_total: int) -> str:
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.hist(totals, bins=np.arange(-0.5, max_total + 1.5, 1), color="#3b6ea8")
    ax.set_xlabel(f"total (of {max_total})")
    ax.set_ylabel("students")
    ax.set_title("Score distribution")
    return _png(fig)


def bars(labels, values, title: str, xlabel: str) -> str:
    fig, ax = plt.subplots(figsize=(6.4, 0.3 * max(len(labels), 3) + 1))
    ax.barh(list(labels)[::-1], list(values)[::-1], color="#c0504d")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    return _png(fig)
