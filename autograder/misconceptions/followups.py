"""The questions a diagnosis asks, declared before any is asked: one more batch per function, not a round trip
per question.

A failed check's diagnosis (``diagnose``) and localisation (``localise``) call the student's function again on
inputs drawn from the check's own input: the probes that prove an entry (``probes.probe_inputs``), the count's
reading at the sizes of its ladder (``counts.reading_inputs``), the competing explanations' inputs (NaN with Q and
K smaller, the previous call's weights, a softmax's input a hundred times smaller) and the mask at ``SIZE``. They
depend only on the check's input (and whether the value holds NaN), so they are listed here, in the groups the
diagnosis asks them, and asked of the student at once; the diagnosis then reads its answers from them.
"""
from __future__ import annotations

import numpy as np

from .competing import previous_call_inputs, smaller_inputs
from .counts import reading_inputs
from .fit import fit_inputs
from .maskshape import SIZE
from .probes import ATTENTION, COUNTS, probe_inputs
from .softmaxaxis import given_last_axis, smaller_input


def follow_ups(function: str, args: tuple, value, locate: bool = True) -> list[list[tuple]]:
    """The inputs the diagnosis of ``value`` (the student's answer on ``args``) may ask, in groups."""
    groups = [probe_inputs(function, args), *fit_inputs(function, args)]
    if function in COUNTS:
        groups += reading_inputs(function, args)          # bytes-as-gb reads them too, even unlocated
    if not locate:
        return groups
    if function in ATTENTION and len(args) == 3:
        groups.append(previous_call_inputs(args))
        if _not_finite(value):
            groups.append([smaller_inputs(args)])
    elif function == "softmax":
        groups += [[smaller_input(args)]] if _not_finite(value) else []
        groups += [[given_last_axis(args)]] if given_last_axis(args) else []
    elif function == "causal_mask":
        groups.append([(SIZE,)])
    return groups


def _not_finite(value) -> bool:
    parts = value if isinstance(value, (tuple, list)) else (value,)
    for part in parts:
        try:
            if not np.all(np.isfinite(np.asarray(part, dtype=float))):
                return True
        except (TypeError, ValueError):
            continue
    return False
