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


def shown_url(db_url: str) -> str:
    """The URL as a message may show it: the file of a SQLite gradebook, else the URL with any password hidden."""
    path = sqlite_path(db_url)
    if path is not None:
        return str(path)
    try:
        from sqlalchemy.engine import make_url
        return make_url(db_url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - a URL SQLAlchemy cannot read is shown without what follows its scheme
        return db_url.split("://", 1)[0] + "://..."


def is_postgres(db_url: str | None) -> bool:
    return bool(db_url) and db_url.split("://", 1)[0].split("+", 1)[0] in ("postgresql", "postgres")


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
        if dialect.name == "postgresql" and module == "psycopg2" and _importable("psycopg"):
            raise ValueError(f"{what} {db_url}: SQLAlchemy reads postgresql:// as the psycopg2 driver, which is not "
                             "installed; psycopg 3 is (the postgres extra): write the URL as postgresql+psycopg://"
                             + db_url.split("://", 1)[1] + ", in nbgrader_config.py too, which formgrader and "
                             "nbgrader export read") from None
        raise ValueError(f"{what} {db_url}: the database driver {module!r} for {dialect.name} is not installed "
                         f"in {sys.executable}: install it there (e.g. `{sys.executable} -m pip install "
                         f"{_package(module)}`), or name the driver in the URL ({dialect.name}+driver://...)") from None


def _importable(module: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(module) is not None


def _package(module: str) -> str:
    """The usual package of a database driver module."""
    return {"psycopg2": "psycopg2-binary", "psycopg": "'attention-course[postgres]' (psycopg 3)", "MySQLdb": "mysqlclient"}.get(module, module)
