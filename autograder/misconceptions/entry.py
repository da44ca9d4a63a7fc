"""One entry of the misconception catalogue: a known-wrong implementation and what to change.

A leaf of the catalogue: the entry modules (``attention``, ``masking``, ``memory``) build their
entries from it, and the package (``diagnose``) imports them, never the other way round.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable
from .pipeline import variant

COUNTING = ("", "one", "two", "three")
ORDINALS = ("First", "Second", "Third")


@dataclass(frozen=True)
class Misconception:
    id: str
    function: str               # the exercise function this variant imitates
    impl: Callable              # same signature and return shape as the exercise function
    advice: str                 # what the student should change
    knobs: dict = field(default_factory=dict, compare=False)   # the pipeline knobs it turns (if any)
    parts: tuple = ()           # for a compound: the entries it combines, in stage order
    constant: Callable | None = None   # for a count: which constant c may stand in (c * this variant still shows it)
    written_in: Callable | None = None  # which constants a student may have written where this entry drops an
                                        # argument (so a compound's other part is not proven by that constant)
    view: Callable | None = None  # view(args, value) -> the part of a value the family fixes: applied to the
                                  # student's value and the variant's alike (``families.py``)

    @property
    def sentence(self) -> str:
        """What the feedback says after the check's own message."""
        if self.parts:
            said = " ".join(f"{ORDINALS[i]}, {p.advice}" for i, p in enumerate(self.parts))
            return f"It looks like {COUNTING[len(self.parts)]} mistakes together. {said}"
        return f"It looks like {self.advice}"


def knobbed(mid: str, function: str, knobs: dict, advice: str, *, constant: Callable | None = None,
            written_in: Callable | None = None, view: Callable | None = None) -> Misconception:
    """An entry that is the exercise's pipeline with ``knobs`` turned."""
    return Misconception(mid, function, variant(function, knobs), advice, dict(knobs), constant=constant,
                         written_in=written_in or constant, view=view)
