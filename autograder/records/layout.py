"""JSON as records and notebooks are written: always valid, and laid out for a person to read and diff."""
from __future__ import annotations

import json
from typing import Any

from ..inert import json_safe


def dumps(value: Any) -> str:
    """Always valid JSON: non-finite floats become null (``json.dumps`` would write NaN), laid out by
    ``laid_out`` (one key, one list item per line)."""
    return laid_out(json_safe(value), sort_keys=True, allow_nan=False)


def laid_out(value: Any, **options: Any) -> str:
    """JSON a person can read and diff, written by json's C encoder: each key of the top-level object on
    a line of its own, and each item of a list it holds on its own line. (``json.dumps`` with ``indent``
    runs in pure Python: for a record or a notebook about five times slower.)"""
    def one(v: Any) -> str:
        return json.dumps(v, **options)

    if not isinstance(value, dict) or not value:
        return one(value)
    lines = []
    for key in (sorted(value) if options.get("sort_keys") else value):
        item = value[key]
        if isinstance(item, list) and item:
            text = "[\n" + ",\n".join(f"  {one(v)}" for v in item) + "\n ]"
        else:
            text = one(item)
        lines.append(f" {one(str(key))}: {text}")
    return "{\n" + ",\n".join(lines) + "\n}"
