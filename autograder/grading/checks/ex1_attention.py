"""ex1_attention: scaled_dot_product_attention(Q, K, V) -> (output, weights)."""
from __future__ import annotations

import solutions as S

from . import _attention as A

NAME = "scaled_dot_product_attention"


def shapes(student, rng):
    return A.shapes(student, NAME, *A.case(rng), rng)


def weights_and_output_match(student, rng):
    return A.matches(student, NAME, S.scaled_dot_product_attention, *A.case(rng), rng)


def rows_sum_to_one(student, rng):
    return A.rows_sum_to_one(student, NAME, S.scaled_dot_product_attention, *A.case(rng), rng)


def stable_for_large_scores(student, rng):
    return A.stable(student, NAME, S.scaled_dot_product_attention, *A.case(rng), rng)
