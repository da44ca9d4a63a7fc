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


UNREADABLE = "(its message could not be read)"


def exception_type(exc: BaseException) -> str:
    """The name of ``exc``'s class, or "an exception" when even that cannot be read (a metaclass's own
    ``__name__`` may raise)."""
    try:
        name = type(exc).__name__
    except BaseException:  # noqa: BLE001 - a student's class: anything may raise
        return "an exception"
    return name[:80] if type(name) is str and name else "an exception"


def exception_text(exc: BaseException) -> str:
    """``str(exc)``, or ``UNREADABLE`` when it raises or is not a string: a student's exception whose
    ``__str__`` raises is still an exception the student raised, not a call that failed."""
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 - a student's __str__: anything may raise
        return UNREADABLE
    return text if type(text) is str else UNREADABLE
