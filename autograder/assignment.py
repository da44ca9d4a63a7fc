"""The assignment's shape: its notebooks, the grade cells each holds, the functions each defines.

A leaf: it imports nothing of this package, so the records, the intake and the
sample class can know the assignment's layout without importing the checks.
"""
from __future__ import annotations

CATEGORIES = ("correctness", "masking", "memory")

# Which notebook each grade cell lives in, and which functions a notebook defines.
NOTEBOOKS = {
    "ex1_attention": ("ex1_softmax", "ex1_attention"),
    "ex2_causal_mask": ("ex2_mask", "ex2_causal"),
    "ex3_memory": ("ex3_memory", "ex3_crossover"),
    "ex4_cross_attention": ("ex4_cross",),
}
FUNCTIONS = {
    "ex1_attention": ("softmax", "scaled_dot_product_attention"),
    "ex2_causal_mask": ("softmax", "causal_mask", "causal_attention"),
    "ex3_memory": ("attention_memory_bytes", "ffn_memory_bytes", "crossover_length"),
    "ex4_cross_attention": ("softmax", "cross_attention"),
}


def notebook_of(grade_id: str) -> str:
    return next(nb for nb, ids in NOTEBOOKS.items() if grade_id in ids)
