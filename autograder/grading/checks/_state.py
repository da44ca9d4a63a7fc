"""Checks that catch state, and checks that give no credit for doing nothing.

State: a value check calls the function with its inputs, then with other values of the same shapes,
then with the first inputs again. A result that changes between identical calls, a result that
depends only on the shapes (a cache keyed on them), or an argument changed in place each fails the
value check, with a message that says exactly that: each is one mistake, charged once there.

Doing nothing: a property check (rows that sum to 1, an axis, stability, no leakage) earns its
point only from code that computes its result from its inputs at all. The answer is trusted as
computed when it equals the reference's; otherwise two inputs of fresh shapes (no cache has seen
them) must give different answers. Constant or zero output is refused; a wrong formula is not.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..student import call_watching
from ...tolerance import close, same_values
from ._base import normal, pick_sizes

NAMES = {"softmax": ("x",), "causal_mask": ("n",)}
ATTENTION_ARGS = ("Q", "K", "V")


@dataclass
class Repeat:
    """Three calls: the first inputs, other values of the same shapes, the first inputs again."""
    first: object
    second: object
    again: object
    changed: tuple[str, ...]         # arguments the function changed in place, in any of the calls


def repeat(student, name: str, convert, first: tuple, second: tuple) -> Repeat:
    """``convert`` turns a raw answer into the arrays the check compares (it may raise StudentError)."""
    answers, changed = [], []
    for raw, moved in call_watching(student, name, [first, second, first]):
        answers.append(convert(raw))
        changed += [_arg_name(name, i) for i in moved if _arg_name(name, i) not in changed]
    return Repeat(*answers, tuple(changed))


def _arg_name(name: str, i: int) -> str:
    names = NAMES.get(name, ATTENTION_ARGS)
    return names[i] if i < len(names) else f"argument {i + 1}"


def state_problem(name: str, r: Repeat, expected_first, expected_second, inputs: str, what: str) -> str | None:
    """The message for a result that changes between identical calls or that ignores the values, else None."""
    if not same_values(r.again, r.first):
        return (f"`{name}` returned other {what} when called again with the same {inputs} (after one call with "
                "other values): its result changes between identical calls, so it keeps state between them. "
                "Compute the result from the arguments alone; an array kept between calls (a global, or one "
                "that `functools.lru_cache` returns) must not be changed in place (`m += scores` changes the "
                "cached array; `scores + m` makes a new one).")
    if same_values(r.second, r.first) and not same_values(expected_second, expected_first):
        return (f"`{name}` returned the same {what} for two different {inputs} of the same shapes: its result "
                "depends on the shapes only, not on the values. Is it cached by shape (a dictionary or "
                "`lru_cache` keyed on the shapes), or a constant? Compute it from the values on every call.")
    return None


def mutation_problem(name: str, changed: tuple[str, ...]) -> str | None:
    if not changed:
        return None
    which = " and ".join(f"`{c}`" for c in changed)
    return (f"`{name}` changes its argument {which} in place: after the call the caller's array holds other "
            "values. Leave the inputs as they are and work on new arrays (`x = x - m`, not `x -= m`).")


# --- doing nothing -----------------------------------------------------------------------------

def fresh_case(rng, *, square: bool = False):
    """Q, K, V of sizes no check draws (10 to 39), so no cache keyed on shapes has seen them."""
    n_q, n_k, d_k, d_v = pick_sizes(rng, 4, 10, 40)
    n_k = n_q if square else n_k
    return normal(rng, n_q, d_k), normal(rng, n_k, d_k), normal(rng, n_k, d_v)


def attends(student, name: str, reference, case: tuple, pair: tuple, part: int, rng, run,
            *, square: bool = False) -> bool:
    """Whether the function computes its answer's ``part`` (0 output, 1 weights) from its inputs at all."""
    if close(pair[part], reference(*case)[part]):
        return True
    Q, K, V = fresh_case(rng, square=square)
    one = run(student, name, Q, K, V)
    if close(one[part], reference(Q, K, V)[part]):
        return True
    two = run(student, name, *(a + normal(rng, *a.shape) for a in (Q, K, V)))
    return not same_values(one[part], two[part])


def nothing_computed(name: str, what: str, judged: str) -> str:
    return (f"`{name}` returns the same {what} for different inputs (two calls with other values of the same, "
            f"fresh shapes): it does not compute them from Q, K and V, so this check ({judged}) earns nothing. Compute the "
            "weights as softmax(Q K^T / sqrt(d_k)) and the output as weights @ V.")
