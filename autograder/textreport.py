"""Plain-text views of a result record (the `check` command's table)."""
from __future__ import annotations


def check_table(record: dict) -> str:
    rows = [f"{'grade id':<14} {'check':<26} {'points':>6}  result"]
    for c in record["checks"]:
        mark = "pass" if c["passed"] else f"FAIL  {c['message']}"
        if c.get("diagnosis"):
            mark += f"  [{c['diagnosis']}]"
        rows.append(f"{c['grade_id']:<14} {c['check']:<26} {c['points']:>2}/{c['max_points']:<3}  {mark}")
    rows.append("")
    rows.append(f"total {record['total']}/{record['max_total']}" +
                ("  (needs review)" if record.get("needs_review") else ""))
    for cat, v in record["categories"].items():
        rows.append(f"  {cat:<12} {v['earned']}/{v['max']}")
    for line in record.get("integrity", []):
        rows.append(f"! {line}")
    for line in record.get("notes", []):
        rows.append(f"  note: {line}")
    return "\n".join(rows)


def doctor_table(layers: dict[str, str]) -> str:
    width = max(len(k) for k in layers)
    return "\n".join(f"{name:<{width}}  {state}" for name, state in layers.items())
