"""The rubric: one declared table, grade_id -> checks with weights and category.

The points are the course's: a grade cell is worth what its nbgrader ``points`` in the source
notebook say, and its checks share them in proportion to their weights here (``scaled``). As the
chapter ships, each cell's points equal its weights, so a weight is a point.

The grade ids are the notebooks' grade-cell ids, the rubric keys, the stub
messages and the pytest markers. Order within a cell is the order checks run
and are reported in.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable


from .checks import ex1_attention, ex1_softmax, ex2_causal, ex2_mask, ex3_memory, ex4_cross


@dataclass(frozen=True)
class Item:
    check: Callable
    points: int
    category: str
    title: str = ""         # what the check asks, in the words an instructor reads (the report's charts)

    @property
    def name(self) -> str:
        return self.check.name


RUBRIC: dict[str, list[Item]] = {
    "ex1_softmax": [
        Item(ex1_softmax.rows_sum_to_one, 1, "correctness",
             "softmax: values sum to 1 along the axis"),
        Item(ex1_softmax.any_axis, 1, "correctness",
             "softmax: works along any axis"),
        Item(ex1_softmax.stable_for_large_inputs, 1, "correctness",
             "softmax: stable for large inputs"),
    ],
    "ex1_attention": [
        Item(ex1_attention.shapes, 1, "correctness",
             "attention: output and weight shapes"),
        Item(ex1_attention.weights_and_output_match, 2, "correctness",
             "attention: weights and output are right"),
        Item(ex1_attention.rows_sum_to_one, 1, "correctness",
             "attention: weight rows sum to 1"),
        Item(ex1_attention.stable_for_large_scores, 1, "correctness",
             "attention: stable for large scores"),
    ],
    "ex2_mask": [
        Item(ex2_mask.shape_and_dtype, 1, "masking",
             "causal mask: (n, n) float array"),
        Item(ex2_mask.values, 2, "masking",
             "causal mask: 0 on and below the diagonal, -inf above"),
    ],
    "ex2_causal": [
        Item(ex2_causal.matches_engine, 2, "correctness",
             "causal attention: weights and output are right"),
        Item(ex2_causal.no_future_leakage, 1, "masking",
             "causal attention: no position sees its future"),
        Item(ex2_causal.rows_sum_to_one, 1, "masking",
             "causal attention: weight rows sum to 1"),
        Item(ex2_causal.first_row, 1, "masking",
             "causal attention: the first position sees only itself"),
        Item(ex2_causal.no_nan_single_token, 1, "masking",
             "causal attention: no NaN, one position too"),
    ],
    "ex3_memory": [
        Item(ex3_memory.attention_bytes_exact, 1, "memory",
             "attention memory: exact bytes in fp16"),
        Item(ex3_memory.attention_bytes_measured, 1, "memory",
             "attention memory: follows dtype_bytes"),
        Item(ex3_memory.ffn_bytes_exact, 2, "memory",
             "FFN memory: exact bytes"),
    ],
    "ex3_crossover": [
        Item(ex3_memory.crossover_exact, 2, "memory",
             "crossover length: the exact smallest n"),
    ],
    "ex4_cross": [
        Item(ex4_cross.shapes, 1, "correctness",
             "cross-attention: output and weight shapes"),
        Item(ex4_cross.matches_engine, 2, "correctness",
             "cross-attention: weights and output are right"),
        Item(ex4_cross.rows_sum_to_one, 1, "correctness",
             "cross-attention: weight rows sum to 1"),
        Item(ex4_cross.no_causal_mask, 1, "masking",
             "cross-attention: no causal mask"),
    ],
}


def check_title(grade_id: str, check: str) -> str:
    """The rubric's title of a check; a check the rubric does not hold (an older record's) by its name."""
    item = next((i for i in RUBRIC.get(grade_id, ()) if i.name == check), None)
    return item.title if item and item.title else f"{grade_id}: {check.replace('_', ' ')}"


def cell_max(grade_id: str) -> int:
    return sum(item.points for item in RUBRIC[grade_id])


def max_total() -> int:
    return sum(cell_max(g) for g in RUBRIC)


def scaled(results: list, cell_points: dict[str, float]) -> list:
    """The check results with their points in the course's points (``cell_points``: grade_id -> the
    cell's nbgrader points in the source notebook; a cell not in it keeps the rubric's weights): each
    check of a cell is worth its weight's share of the cell's points."""
    out = []
    for r in results:
        total = cell_points.get(r.grade_id)
        weight = cell_max(r.grade_id) if r.grade_id in RUBRIC else 0
        if total is None or not weight or total == weight:
            out.append(r)
            continue
        factor = float(total) / weight
        out.append(replace(r, points=r.points * factor, max_points=r.max_points * factor))   # sums are rounded
    return out
