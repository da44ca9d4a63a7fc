"""Checks that catch state: what the value checks ask besides the values.

A value check calls the function on its inputs, then on inputs that change some arguments and keep the
others (for attention: the same Q with new K and V, the same K and V with a new Q, then each of K and V new
alone, so a cache keyed on any subset of Q, K and V is hit; for softmax: a new x),
then on its first inputs again, all in one round trip, and reads every answer after the last call (as
the sandbox's worker sends them). Each of these is one mistake, charged once there, with a message
that says exactly what the calls showed:

- a result that changes between identical calls (state kept between them, or random numbers);
- a result that is the same for inputs that differ (a cache keyed on the shapes or on any subset of the
  arguments, or an argument that is ignored): the arguments it did not follow are said, and the ones kept;
- an earlier result that changes after a later call (one array kept between calls and returned each
  time: the caller's earlier result is overwritten);
- an argument changed in place.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..asking import Question
from ...tolerance import same_values

NAMES = {"softmax": ("x",), "causal_mask": ("n",)}
ATTENTION_ARGS = ("Q", "K", "V")


@dataclass
class Repeat:
    """The answers to the state probe: ``first`` (the check's inputs), ``varied`` (one per varied input, in
    order) and ``again`` (the first inputs once more), each read after the last call; ``alone``: the reply to
    the first varied input asked once more on its own, after them (read only when every answer is the same)."""
    first: object
    varied: list
    again: object
    changed: tuple[str, ...]         # arguments the function changed in place, in any of the calls


def repeat_questions(name: str, first: tuple, varied: list[tuple]) -> list[Question]:
    """[first, *varied, first], each with its arguments sent back, every answer read after the last call."""
    asked = [first, *varied, first]
    return [Question(name, tuple(args), echo=True, draws="call-order", hold=k < len(asked) - 1)
            for k, args in enumerate(asked)]


def repeat(name: str, convert, replies: list, first: tuple, varied: list[tuple]) -> Repeat:
    """The state probe's replies read: ``convert`` turns a raw answer into the arrays the check compares (it
    may raise StudentError); the first call that failed raises its StudentError."""
    args_list = [first, *varied, first]
    raws = [r.get() for r in replies[:len(args_list)]]
    changed = []
    for args, reply in zip(args_list, replies):
        moved = [_arg_name(name, i) for i in _changed(args, reply.after)]
        changed += [m for m in moved if m not in changed]
    answers = [convert(raw) for raw in raws]             # read after the last call, as the worker sends them
    return Repeat(answers[0], answers[1:-1], answers[-1], tuple(changed))


def _changed(before: tuple, after) -> list[int]:
    if not isinstance(after, (tuple, list)) or len(after) != len(before):
        return []                                 # nothing came back: nothing is claimed
    return [i for i, (a, b) in enumerate(zip(before, after)) if isinstance(a, np.ndarray)
            and not (isinstance(b, np.ndarray) and a.shape == b.shape and np.array_equal(a, b, equal_nan=True))]


def _arg_name(name: str, i: int) -> str:
    names = NAMES.get(name, ATTENTION_ARGS)
    return names[i] if i < len(names) else f"argument {i + 1}"


@dataclass(frozen=True)
class Varied:
    """One varied input of the state probe: its arguments, the reference's answer and how to say it.
    ``new`` names the arguments it changed; with ``stale_only`` an unchanged part counts only when the
    first answer's part was right (the function computed it, then gave it again: a cache hit), so a
    mistake that makes a part ignore an argument (weights returned as the output ignore V) is the value
    comparison's to say."""
    args: tuple
    expected: object
    said: str                # "the same Q with new K and V"
    new: tuple[str, ...] = ("x",)
    stale_only: bool = False


def state_problem(name: str, r: Repeat, expected_first, varied: list[Varied],
                  what: tuple[str, ...]) -> str | AskAlone | None:
    """The message for state the calls showed, else None; ``AskAlone`` when every answer was the same (what that
    means takes one more question). ``what`` names the parts of an answer (one name for a single array, two for
    (output, weights)); each part is judged on its own."""
    for part, label in _parts(what):
        first, again = _part(r.first, part), _part(r.again, part)
        if not same_values(again, first):
            return (f"`{name}` returned other {label} when called again with the same {_inputs(name)} (after calls "
                    "with other values): its result changes between identical calls, so it keeps state between them "
                    "(or draws random numbers). Compute the result from the arguments alone; an array kept between "
                    "calls (a global, or one that `functools.lru_cache` returns) must not be changed in place "
                    "(`m += scores` changes the cached array; `scores + m` makes a new one).")
    hits = []                          # (label, the varied input) where a part stayed as it was
    for part, label in _parts(what):
        answers = [_part(a, part) for a in (r.first, *r.varied)]
        if any(_has_nan(a) for a in answers):
            continue                   # NaN equals itself for any input: the values and their NaN are said instead
        expected = [_part(e, part) for e in (expected_first, *(v.expected for v in varied))]
        differ = [k for k in range(1, len(answers)) if not same_values(expected[k], expected[0])]
        if differ and all(same_values(answers[k], answers[0]) for k in range(1, len(answers))):
            return AskAlone(varied[0].args, lambda alone, p=part, lab=label: _all_the_same(name, r, alone, p, lab))
        right = same_values(answers[0], expected[0])
        hits += [(label, varied[k - 1]) for k in differ if same_values(answers[k], answers[0])
                 and (right or not varied[k - 1].stale_only)]
    return _not_followed(name, hits) if hits else None


def _not_followed(name: str, hits: list) -> str:
    """The first part that stayed the same for inputs that differ, and every argument some part did not follow."""
    label, v = hits[0]
    names = NAMES.get(name, ATTENTION_ARGS)
    lost = [a for a in names if any(a in h.new for _, h in hits)]
    kept = _and([a for a in names if a not in lost]) or "the shapes"
    return (f"`{name}` returned the same {label} for {v.said} as for its first inputs: its result does not follow "
            f"{_and(lost)}. Is it cached on {kept} alone (a dictionary or `lru_cache` keyed on {kept}), or does it "
            f"ignore {_and(lost)}? Compute it from every argument on every call.")


def _and(names: list[str]) -> str:
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)


@dataclass(frozen=True)
class AskAlone:
    """Every answer of the state probe was the same: the first varied input asked again on its own, in a batch
    of its own (after the probe's last call), tells a cache keyed on the shapes from a returned buffer;
    ``said(answer)`` is the message for that answer (read as the check reads it)."""
    args: tuple
    said: object


def _all_the_same(name, r, answer, part, label) -> str:
    """Every answer of the round trip is the same: a cache keyed on the shapes (the first answer for all),
    or one array returned each time and overwritten by the next call (the last answer for all). The first
    varied inputs asked alone tell them apart."""
    alone = _part(answer, part)
    if not same_values(alone, _part(r.first, part)):
        return (f"`{name}`'s earlier results change when it is called again: after a later call, the {label} it "
                "had returned for other inputs held the later call's values. It returns one array that it keeps "
                "between calls and overwrites each time, so a caller's earlier result changes under them. Return a "
                "new array from every call (`weights = softmax(...)`, not `buffer[...] = ...`).")
    return (f"`{name}` returned the same {label} for two different {_inputs(name)} of the same shapes: its "
            "result depends on the shapes only, not on the values. Is it cached by shape (a dictionary or "
            "`lru_cache` keyed on the shapes), or a constant? Compute it from the values on every call.")


def _has_nan(value) -> bool:
    try:
        return bool(np.isnan(np.asarray(value, dtype=float)).any())
    except (TypeError, ValueError):
        return False


def _parts(what: tuple[str, ...]):
    """(index, name) of each part, the weights before the output (they say more about what is cached)."""
    return [(None, what[0])] if len(what) == 1 else list(enumerate(what))[::-1]


def _part(answer, part):
    return answer if part is None else answer[part]


def _inputs(name: str) -> str:
    return "x" if name == "softmax" else "Q, K and V"


def mutation_problem(name: str, changed: tuple[str, ...]) -> str | None:
    if not changed:
        return None
    which = " and ".join(f"`{c}`" for c in changed)
    return (f"`{name}` changes its argument {which} in place: after the call the caller's array holds other "
            "values. Leave the inputs as they are and work on new arrays (`x = x - m`, not `x -= m`).")
