"""A gradebook URL checked before grading starts, so that a wrong one costs a line, not a graded class.

nbgrader opens its gradebook with SQLAlchemy, so a URL is ``scheme://...``; a SQLite gradebook is a
file (``sqlite:////abs/path.db``, its query string, ``?mode=ro`` say, is no part of the file name).
A SQLite file that does not exist is refused unless the run may create it (``--create-gradebook``,
or the course's own gradebook, which nbgrader creates too): a mistyped path must not start an
empty gradebook. Another database needs its SQLAlchemy dialect and driver in this interpreter.
"""
from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urlsplit

SQLITE = "sqlite:///"


def sqlite_path(db_url: str | None) -> Path | None:
    """The file of a SQLite gradebook URL (its query string dropped), None for another database."""
    if not db_url or not db_url.startswith(SQLITE) or db_url == SQLITE:
        return None
    return Path(db_url[len(SQLITE):].split("?", 1)[0])


def check_gradebook_url(db_url: str, *, create: bool, what: str = "--gradebook") -> None:
    """Raise ValueError, saying what is wrong and what to do, unless nbgrader can open ``db_url``."""
    if "://" not in db_url:
        path = Path(db_url).resolve()
        raise ValueError(f"{what} {db_url} is not a database URL: nbgrader's gradebook is named by a URL, "
                         f"for a SQLite file sqlite:///{path} (sqlite:/// then the absolute path)")
    path = sqlite_path(db_url)
    if path is not None:
        _check_sqlite_file(path, db_url, create=create, what=what)
    elif not db_url.startswith("sqlite:"):
        _check_driver(db_url, what)


def _check_sqlite_file(path: Path, db_url: str, *, create: bool, what: str) -> None:
    if path.is_dir():
        raise ValueError(f"{what} {db_url} names the folder {path}, not a gradebook file: add the file name, "
                         f"e.g. sqlite:///{path / 'gradebook.db'}")
    if path.exists():
        return
    if not create and not path.parent.is_dir():
        raise ValueError(f"{what} {db_url}: the folder {path.parent} does not exist; check the path "
                         "(or add --create-gradebook to start a new gradebook there)")
    if not create:
        raise ValueError(f"the gradebook {path} ({what}) does not exist, and a mistyped path would start a new, "
                         "empty gradebook: check the path, or add --create-gradebook to start a new one there")


def _check_driver(db_url: str, what: str) -> None:
    """The URL's SQLAlchemy dialect and its database driver, loaded as nbgrader will load them."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError
    scheme = urlsplit(db_url).scheme
    try:
        dialect = make_url(db_url).get_dialect()
    except NoSuchModuleError:               # (an ArgumentError too)
        hint = " (SQLAlchemy spells it postgresql://)" if scheme.split("+")[0] == "postgres" else ""
        raise ValueError(f"{what} {db_url}: SQLAlchemy knows no database kind {scheme!r}{hint}; use one of "
                         "sqlite, postgresql, mysql, mariadb, oracle, mssql") from None
    except ArgumentError as exc:
        raise ValueError(f"{what} {db_url} is not a database URL SQLAlchemy can read ({exc}); "
                         "write it as dialect+driver://user@host/database") from None
    try:
        dialect.import_dbapi()
    except ImportError as exc:
        module = getattr(exc, "name", None) or str(exc)
        raise ValueError(f"{what} {db_url}: the database driver {module!r} for {dialect.name} is not installed "
                         f"in {sys.executable}: install it there (e.g. `{sys.executable} -m pip install "
                         f"{_package(module)}`), or name the driver in the URL ({dialect.name}+driver://...)") from None


def _package(module: str) -> str:
    """The usual package of a database driver module."""
    return {"psycopg2": "psycopg2-binary", "psycopg": "psycopg[binary]", "MySQLdb": "mysqlclient"}.get(module, module)
