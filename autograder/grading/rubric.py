"""The rubric: one declared table, grade_id -> checks with points and category.

The grade ids are the notebooks' grade-cell ids, the rubric keys, the stub
messages and the pytest markers. Order within a cell is the order checks run
and are reported in.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .checks import ex1_attention, ex1_softmax, ex2_causal, ex2_mask, ex3_memory, ex4_cross


@dataclass(frozen=True)
class Item:
    check: Callable
    points: int
    category: str

    @property
    def name(self) -> str:
        return self.check.__name__


RUBRIC: dict[str, list[Item]] = {
    "ex1_softmax": [
        Item(ex1_softmax.rows_sum_to_one, 1, "correctness"),
        Item(ex1_softmax.any_axis, 1, "correctness"),
        Item(ex1_softmax.stable_for_large_inputs, 1, "correctness"),
    ],
    "ex1_attention": [
        Item(ex1_attention.shapes, 1, "correctness"),
        Item(ex1_attention.weights_and_output_match, 2, "correctness"),
        Item(ex1_attention.rows_sum_to_one, 1, "correctness"),
        Item(ex1_attention.stable_for_large_scores, 1, "correctness"),
    ],
    "ex2_mask": [
        Item(ex2_mask.shape_and_dtype, 1, "masking"),
        Item(ex2_mask.values, 2, "masking"),
    ],
    "ex2_causal": [
        Item(ex2_causal.matches_engine, 2, "correctness"),
        Item(ex2_causal.no_future_leakage, 1, "masking"),
        Item(ex2_causal.rows_sum_to_one, 1, "masking"),
        Item(ex2_causal.first_row, 1, "masking"),
        Item(ex2_causal.no_nan_single_token, 1, "masking"),
    ],
    "ex3_memory": [
        Item(ex3_memory.attention_bytes_exact, 1, "memory"),
        Item(ex3_memory.attention_bytes_measured, 1, "memory"),
        Item(ex3_memory.ffn_bytes_exact, 2, "memory"),
    ],
    "ex3_crossover": [
        Item(ex3_memory.crossover_exact, 2, "memory"),
    ],
    "ex4_cross": [
        Item(ex4_cross.shapes, 1, "correctness"),
        Item(ex4_cross.matches_engine, 2, "correctness"),
        Item(ex4_cross.rows_sum_to_one, 1, "correctness"),
        Item(ex4_cross.no_causal_mask, 1, "masking"),
    ],
}


def cell_max(grade_id: str) -> int:
    return sum(item.points for item in RUBRIC[grade_id])


def max_total() -> int:
    return sum(cell_max(g) for g in RUBRIC)
