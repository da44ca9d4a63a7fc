"""A real PostgreSQL server for the tests: the distribution's, in a temporary folder, on a Unix socket.

``make test`` installs it (``make postgres``: Debian's postgresql-15, as root, like the browser). The
server's programs refuse to run as root, so as root they run as the ``postgres`` account the package
creates; as anyone else, as that user. ``PgServer.unavailable()`` says why a server cannot be had here
(the tests then skip with that reason); nothing else is ever skipped.
"""
from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

VERSIONS = ("15", "16", "17", "14")


def pg_bin() -> Path | None:
    """The folder of the distribution's server programs (initdb, pg_ctl, postgres)."""
    for version in VERSIONS:
        folder = Path(f"/usr/lib/postgresql/{version}/bin")
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    found = shutil.which("pg_ctl")
    return Path(found).resolve().parent if found else None


class PgServer:
    """One server in its own folder; ``url(db)`` names a database on it for SQLAlchemy (psycopg 3)."""

    def __init__(self):
        self.bin = pg_bin()
        self.root = Path(tempfile.mkdtemp(prefix="pg-test-"))
        self.data, self.socket, self.log = self.root / "data", self.root / "sock", self.root / "server.log"
        self.user = self._account()

    @staticmethod
    def unavailable() -> str | None:
        """Why no server can be started here, or None."""
        if pg_bin() is None:
            return "PostgreSQL's server programs are not installed (make postgres installs them, as root)"
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                return "running as root and there is no postgres account to run the server as"
        try:
            import psycopg  # noqa: F401
        except ImportError:
            return "psycopg is not installed (pip install -e '.[dev]' pulls in the postgres extra)"
        return None

    def _account(self) -> str | None:
        return "postgres" if os.geteuid() == 0 else None

    def _run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        command = [str(self.bin / args[0]), *args[1:]]
        if self.user:
            command = ["runuser", "-u", self.user, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=True,
                              cwd=self.root)

    def start(self) -> "PgServer":
        if self.user:
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self.root.chmod(0o755)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--locale=C", "--no-sync", timeout=120)
        self._run_start()
        return self

    def _run_start(self) -> None:
        self.socket.mkdir(exist_ok=True)
        if self.user:
            entry = pwd.getpwnam(self.user)
            os.chown(self.socket, entry.pw_uid, entry.pw_gid)
        options = (f"-k {self.socket} -c listen_addresses='' -c fsync=off -c synchronous_commit=off "
                   "-c full_page_writes=off -c max_connections=50 -c shared_buffers=16MB")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60", "start",
                  timeout=90)

    def stop(self, mode: str = "fast") -> None:
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop", timeout=90)

    def restart(self) -> None:
        self._run_start()

    def close(self) -> None:
        try:
            self.stop("immediate")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str) -> str:
        return f"postgresql://postgres@/{database}?host={self.socket}"

    def create_database(self, name: str) -> str:
        """A new, empty database; its SQLAlchemy URL."""
        import psycopg
        with psycopg.connect(host=str(self.socket), user="postgres", dbname="postgres", autocommit=True) as db:
            db.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def sql(self, database: str, query: str, params=()) -> list[tuple]:
        import psycopg
        with psycopg.connect(host=str(self.socket), user="postgres", dbname=database, autocommit=True) as db:
            cursor = db.execute(query, params)
            return cursor.fetchall() if cursor.description else []


def wait_until(predicate, timeout: float = 30.0, step: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()
