"""Short transactions on a gradebook that people use at the same time (formgrader, nbgrader's commands).

The writer holds the database only while it writes one small batch of students: each batch is one
transaction (all of a student's rows or none), retried whole when another writer got in the way (SQLite
says "database is locked"; PostgreSQL aborts a REPEATABLE READ transaction that would overwrite a row
committed since it began, such as a manual score saved in formgrader, or one caught in a deadlock).
Between batches the gradebook is free, so a person's save waits at most one batch.

A database that goes away (its server stopped, the connection cut) is ``GradebookGone``: the caller
says so in one line; what was committed stays, and the records on disk are what ``grade --resume``
writes the rest from.
"""
from __future__ import annotations

import time

from .nbgrader_api import one_transaction
from .url import shown_url

RETRY_FOR = 120.0          # seconds a batch is retried while people's transactions get in its way
CONFLICT_STATES = {"40001", "40P01", "55P03"}       # serialization failure, deadlock, lock not available
GONE_STATES = ("08", "57P01", "57P02", "57P03")      # connection exceptions, the server shutting down


class GradebookGone(RuntimeError):
    """The gradebook's database cannot be reached any more."""


def database_error(exc: BaseException) -> BaseException:
    """The database's own error behind ``exc``: nbgrader's API rolls back and raises its ``InvalidEntry`` in
    place of the SQLAlchemy error it caught (a conflict, a server gone), which stays in the chain."""
    seen = exc
    for _ in range(8):
        if hasattr(seen, "orig") or (seen.__cause__ or seen.__context__) is None:
            break
        seen = seen.__cause__ or seen.__context__
    return seen if hasattr(seen, "orig") else exc


def sqlstate(exc: BaseException) -> str:
    orig = getattr(database_error(exc), "orig", None)
    return str(getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None) or "")


def is_conflict(exc: BaseException) -> bool:
    """Another transaction got in the way: the whole batch can be done again."""
    return sqlstate(exc) in CONFLICT_STATES or "database is locked" in str(database_error(exc))


def is_gone(exc: BaseException) -> bool:
    """The database went away (or was never there): no retry here helps."""
    state = sqlstate(exc)
    exc = database_error(exc)
    text = str(exc)
    return (bool(getattr(exc, "connection_invalidated", False)) or state.startswith(GONE_STATES)
            or any(words in text for words in ("connection failed", "connection is bad", "server closed the connection",
                                               "connection is lost", "the connection is closed",
                                               "terminating connection", "Connection refused",
                                               "Is the server running")))


def short_transaction(gb, work, *, read_only: bool = False, retry_for: float = RETRY_FOR,
                      stats: dict | None = None):
    """``work()`` as one transaction (``read_only``: rolled back at its end), done again from the start
    while other transactions get in its way (for up to ``retry_for`` seconds); its result. PostgreSQL
    runs it at REPEATABLE READ, so a row a person changed since it began is never written over from a
    stale read."""
    from sqlalchemy.exc import DBAPIError
    started, delay = time.monotonic(), 0.02
    while True:
        try:
            with one_transaction(gb):
                if gb.engine.dialect.name == "postgresql":
                    gb.db.connection(execution_options={"isolation_level": "REPEATABLE READ"})
                result = work()
                if read_only:
                    raise _ReadDone(result)
            _count(stats, "transactions")
            return result
        except _ReadDone as done:
            return done.result
        except Exception as exc:  # noqa: BLE001 - the database's error, perhaps inside nbgrader's InvalidEntry
            if not isinstance(database_error(exc), DBAPIError):
                raise
            if is_gone(exc):
                raise GradebookGone(gone_message(gb.engine.url, exc)) from None
            if not is_conflict(exc) or time.monotonic() - started > retry_for:
                raise
            _count(stats, "retries")
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


class _ReadDone(Exception):
    """Ends a read-only transaction: the block rolls back, and the result is returned."""

    def __init__(self, result):
        super().__init__()
        self.result = result


def _count(stats: dict | None, what: str) -> None:
    if stats is not None:
        stats[what] = stats.get(what, 0) + 1


def gone_message(url, exc: BaseException) -> str:
    why = " ".join(str(getattr(exc, "orig", None) or exc).split())[:200]
    return (f"the gradebook database {shown_url(str(url))} went away ({why}); every student written before stays "
            "written, each whole, and every graded record is on disk: when the database is back, run grade "
            "--resume, which writes the gradebook from the records without grading again")
