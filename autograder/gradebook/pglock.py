"""One grading run at a time on a PostgreSQL gradebook: a session-level advisory lock on the server.

A lock file beside the gradebook (``runlock``) only works for a SQLite file; two runs on two machines
(or two folders) writing one PostgreSQL gradebook would interleave their students. The run's main
process holds ``pg_advisory_lock`` on its own connection from before grading starts to the end of the
run; the server drops it when that connection closes, so a killed run never leaves a stale lock.
The connection's ``application_name`` says which run holds it (pid and start time), for the message a
second run gets. The gradebook writer checks, before each commit, that the lock is still held by the
run's connection (``held_by``), as it checks a lock file is still the one it holds.
"""
from __future__ import annotations

import os
import time
from datetime import datetime, timezone

from .holder import alive, locked
from .timestamps import written_time
from .url import shown_url

KEY = (0x61747463, 0x67726164)          # the two int4 keys of the lock: "attc", "grad"
TAG = "attn-grade"                      # the lock connection's application_name: TAG PID STARTED (< 64 bytes)


class ServerRunLock:
    """The advisory lock of one PostgreSQL gradebook, held from ``acquire()`` until ``release()``."""

    def __init__(self, db_url: str):
        self.db_url, self.what = db_url, f"the gradebook {shown_url(db_url)}"
        self.connection = self.engine = None
        self.backend: int | None = None          # the server process of the lock's connection

    def acquire(self, wait_for_orphans: float = 5.0) -> "ServerRunLock":
        self._connect(f"{TAG} {os.getpid()} {written_time(datetime.now(timezone.utc))}")
        deadline = time.monotonic() + wait_for_orphans
        while not self._try():
            holder = self._holder()
            if alive(holder.get("pid")) or time.monotonic() > deadline:
                self.release()
                raise locked(holder, self.what)
            time.sleep(0.1)
        return self

    def _connect(self, name: str) -> None:
        from sqlalchemy import create_engine
        from sqlalchemy.exc import DBAPIError
        from sqlalchemy.pool import NullPool
        self.engine = create_engine(self.db_url, poolclass=NullPool, connect_args={"application_name": name})
        try:
            self.connection = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
            self.backend = self.connection.exec_driver_sql("SELECT pg_backend_pid()").scalar()
        except DBAPIError as exc:
            self.engine.dispose()
            why = " ".join(str(exc.orig).split())[:300]
            raise ValueError(f"cannot reach {self.what} ({why}): start the database server or fix the URL, "
                             "then grade again") from None

    def _try(self) -> bool:
        return bool(self.connection.exec_driver_sql(f"SELECT pg_try_advisory_lock({KEY[0]}, {KEY[1]})").scalar())

    def _holder(self) -> dict:
        """pid and start time of the run whose connection holds the lock (from its application_name)."""
        row = self.connection.exec_driver_sql(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            f"WHERE l.locktype = 'advisory' AND l.classid = {KEY[0]} AND l.objid = {KEY[1]} "
            "AND l.objsubid = 2 AND l.granted").first()
        tag, _, rest = (row[0] if row else "").partition(" ")
        pid, _, started = rest.partition(" ")
        if tag != TAG:
            return {}
        return {"started": started or "?", **({"pid": int(pid)} if pid.isdigit() else {})}

    def release(self) -> None:
        if self.connection is not None:
            try:
                self.connection.close()              # the server drops the session's advisory locks
            except Exception:  # noqa: BLE001 - a connection already gone holds no lock
                pass
            self.connection = None
        if self.engine is not None:
            self.engine.dispose()
            self.engine = None


def held_by(session, backend: int) -> bool:
    """True while the server process ``backend`` (the run's lock connection) holds the run lock."""
    from sqlalchemy import text
    return session.execute(text(
        f"SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = {KEY[0]} "
        f"AND objid = {KEY[1]} AND objsubid = 2 AND granted AND pid = :backend"), {"backend": backend}).scalar() > 0
