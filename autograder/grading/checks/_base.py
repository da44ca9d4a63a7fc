"""What a check is and returns, and the helpers every check shares.

A check is data first: ``ask(rng)`` declares its questions (a ``Plan``), all of them before any is asked, and
``judge(plan, replies)`` reads the answers and returns an ``Outcome``, or a ``Later`` when what it says depends
on the answers to more questions (``verdicts.py``; the runner asks them in one more batch per function).
"""
from __future__ import annotations

import numpy as np

from ..runner import Check  # noqa: F401 - a check's type, for the check modules
from ..verdicts import (COUNTS, Deferred, FollowUp, Later, Outcome, Pending, Plan, Probe, Raised, answer,  # noqa: F401
                        credited, fail, listified, mismatch, nan_first, ok, question, read_mask, stateful)


def pick_sizes(rng: np.random.Generator, count: int, low: int = 2, high: int = 10) -> list[int]:
    """``count`` different sizes in [low, high), so a transposed or swapped axis cannot hide."""
    return [int(v) for v in rng.choice(np.arange(low, high), size=count, replace=False)]


def normal(rng: np.random.Generator, *shape, scale: float = 1.0) -> np.ndarray:
    return rng.normal(0.0, scale, shape)
