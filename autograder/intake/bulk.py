"""What makes a notebook large: its text by part (code, markdown, raw cells, outputs, attachments,
metadata), counted in characters on the parsed notebook, so the note on an oversized notebook says what it
holds and what to do, instead of always blaming outputs."""
from __future__ import annotations

PARTS = {"outputs": "the outputs were ignored and the code graded; clear the outputs and resubmit",
         "code": "it was graded; keep data out of code cells (read it from a file) and resubmit",
         "markdown": "markdown is not graded, the code was; remove what is pasted or embedded in it and resubmit",
         "raw cells": "raw cells are not graded, the code was; remove them and resubmit",
         "attachments": "attachments are not graded, the code was; remove the attached images and resubmit",
         "metadata": "metadata is not graded, the code was; clear the notebook's metadata and resubmit"}
_CELL_PART = {"code": "code", "markdown": "markdown", "raw": "raw cells"}


def held_by(nb: dict) -> dict[str, int]:
    """Characters of text in each part of ``nb`` (a parsed notebook of any shape)."""
    held = dict.fromkeys(PARTS, 0)
    held["metadata"] += _chars(nb.get("metadata")) if isinstance(nb, dict) else 0
    cells = nb.get("cells") if isinstance(nb, dict) else None
    for cell in cells if isinstance(cells, list) else ():
        if not isinstance(cell, dict):
            continue
        held[_CELL_PART.get(cell.get("cell_type"), "raw cells")] += _chars(cell.get("source"))
        for key, part in (("outputs", "outputs"), ("attachments", "attachments"), ("metadata", "metadata")):
            held[part] += _chars(cell.get(key))
    return held


def bulk_note(name: str, size: int, limit: int, nb: dict) -> str:
    """The note on notebook ``name`` of ``size`` bytes, over ``limit``: what it mostly holds, what to do."""
    held = held_by(nb)
    most = max(held, key=held.get)
    parts = ", ".join(f"{part} {n / 1e6:.1f} MB" for part, n in sorted(held.items(), key=lambda p: -p[1]) if n >= 1e5)
    return (f"{name}.ipynb is {size / 1e6:.0f} MB (limit {limit >> 20} MB), mostly {most} ({parts or 'no part over 0.1 MB'}); "
            f"{PARTS[most]}.")


def _chars(value) -> int:
    """Characters in the strings of a JSON value (keys included), without recursion."""
    total, todo = 0, [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            total += sum(len(k) for k in item if isinstance(k, str))
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return total
