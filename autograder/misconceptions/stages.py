"""What a localisation says: the stage of the computation that deviates, in one sentence.

A leaf of the catalogue: ``localise`` (attention), ``counts`` (memory counts) and ``maskshape``
(the causal mask) all return one, and none of them imports another to build it.
"""
from __future__ import annotations

from dataclasses import dataclass

STAGES = ("nan", "state", "softmax-axis", "softmax", "mask", "scale", "scores", "output", "layout",
          "n", "d_model", "dtype_bytes", "expansion", "unit", "count-dtype")


@dataclass(frozen=True)
class Localisation:
    stage: str          # one of STAGES
    sentence: str       # one sentence for the student
