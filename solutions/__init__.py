"""Reference engine for the scaled dot-product attention chapter.

Every function chooses its array namespace from its arguments (numpy, CuPy or
any array-API library) and returns arrays of that namespace. Importing this
package imports numpy and array-api-compat only; never CuPy.
"""
from .attention import causal_attention, cross_attention, scaled_dot_product_attention
from .blocked import blocked_attention
from .costs import (
    attention_flops,
    attention_memory_bytes,
    crossover_length,
    ffn_memory_bytes,
    memory_table,
)
from .masks import causal_mask, combine_masks, padding_mask, prefix_lm_mask
from .softmax import softmax, softmax_jacobian
from .variance import SweepRow, peakedness, variance_sweep

__all__ = [
    "softmax", "softmax_jacobian",
    "scaled_dot_product_attention", "causal_attention", "cross_attention",
    "causal_mask", "padding_mask", "prefix_lm_mask", "combine_masks",
    "attention_memory_bytes", "ffn_memory_bytes", "crossover_length", "attention_flops",
    "memory_table", "variance_sweep", "peakedness", "SweepRow", "blocked_attention",
]
