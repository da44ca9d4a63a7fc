"""ex1_attention: scaled_dot_product_attention(Q, K, V) -> (output, weights)."""
from __future__ import annotations

from . import _attention as A
from . import _properties as P

NAME = "scaled_dot_product_attention"

shapes = A.shapes_check(NAME)
weights_and_output_match = A.matches_check("weights_and_output_match", NAME)
rows_sum_to_one = P.rows_check(NAME)
stable_for_large_scores = P.stable_check(NAME)
