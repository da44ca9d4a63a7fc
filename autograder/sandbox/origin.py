"""Which of the student's functions raised: used by the worker (sandboxed) and by in-process grading."""
from __future__ import annotations


def raised_in(exc: BaseException, namespace: dict) -> str | None:
    """The innermost function defined in ``namespace`` that was running when ``exc`` was raised."""
    found, tb, steps = None, exc.__traceback__, 0
    while tb is not None and steps < 10_000:
        steps += 1
        code = tb.tb_frame.f_code
        if tb.tb_frame.f_globals is namespace and code.co_name != "<module>":
            found = code.co_name
        tb = tb.tb_next
    return found
