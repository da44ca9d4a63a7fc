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
from .readonly import read_only_url

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


def check_course_gradebook(db_url: str, *, course: Path, out: Path, assignment: str, create: bool,
                           what: str) -> None:
    """The course's own gradebook (``db_url``), which a run may start only when nothing shows one was used
    before (``earlier_run``): a gradebook gone missing (moved, a copy of the course, a mistyped ``db_url``) would take the
    manual grades, comments and due dates with it, silently. So is an empty one there (no submission of the
    assignment): nbgrader's own commands and formgrader make a new gradebook wherever ``db_url`` points, and
    ``--resume`` then wrote into it as if nothing were lost. ValueError naming the expected gradebook and
    ``--create-gradebook`` (which starts a new one, or grades into the empty one, anyway)."""
    path = sqlite_path(db_url)
    earlier = None if create or path is None or path.exists() else earlier_run(course, out, assignment)
    if earlier:
        raise ValueError(f"the course's gradebook {path} ({what}) does not exist, but {earlier}, so a gradebook was "
                         "used before and its manual grades, comments and due dates would be lost: put it back (or "
                         "correct db_url), or add --create-gradebook to start a new, empty one")
    check_gradebook_url(db_url, create=True, what=what)
    answered = None if create else answered_run(out)
    if answered and submissions_in(db_url, assignment) == 0:
        raise ValueError(f"the course's gradebook {shown_url(db_url)} ({what}) holds no submission of {assignment}, "
                         f"but {answered}: it is a new, empty gradebook (nbgrader makes one wherever db_url points when "
                         "the old one is gone), and the old one's manual grades, comments and due dates are not in it: "
                         "put the old one back (or correct db_url), or add --create-gradebook to grade into this one")


def submissions_in(db_url: str, assignment: str) -> int | None:
    """How many submissions of ``assignment`` the gradebook holds (0 for a database without nbgrader's
    tables), read without writing; None when it cannot be read (the run then says why, as before)."""
    url = read_only_url(db_url)
    if url is None:
        return 0
    from sqlalchemy import create_engine, inspect, text
    from sqlalchemy.pool import NullPool
    try:
        engine = create_engine(url, poolclass=NullPool)
        try:
            with engine.connect() as db:
                if not {"assignment", "submitted_assignment"} <= set(inspect(db).get_table_names()):
                    return 0
                return int(db.execute(text("SELECT count(*) FROM submitted_assignment s JOIN assignment a ON "
                                           "s.assignment_id = a.id WHERE a.name = :a"), {"a": assignment}).scalar())
        finally:
            engine.dispose()
    except Exception:  # noqa: BLE001 - an unreadable database is reported where the run opens it
        return None


def answered_run(out: Path) -> str | None:
    """What shows that the gradebook held an earlier run's submissions: a row of its grades.csv whose lateness
    the gradebook gave (a run whose gradebook could not be written says "unknown" there, and a later run
    may fill a still empty gradebook), or None."""
    import csv
    try:
        with open(out / "grades.csv", newline="", encoding="utf-8") as f:
            rows = csv.DictReader(f)
            for n, row in enumerate(rows):
                if row.get("seconds_late") not in (None, "", "unknown"):
                    return f"{out / 'grades.csv'} holds the scores it gave an earlier run"
                if n > 10_000:
                    break
    except (OSError, ValueError, csv.Error):
        return None
    return None


def earlier_run(course: Path, out: Path, assignment: str) -> str | None:
    """What shows that a gradebook was used for ``assignment``, or None: the grades.csv of an earlier run
    (written with the scores), or nbgrader's autograded notebooks of it (written by ``grade`` and
    ``nbgrader autograde`` with the course's gradebook). Records alone do not: a run without outputs
    (``grade_batch(outputs=False)``) writes records and no gradebook."""
    if (out / "grades.csv").is_file():
        return f"{out / 'grades.csv'} is there from an earlier run"
    autograded = course / "autograded"
    if autograded.is_dir() and any((s / assignment).is_dir() for s in autograded.iterdir()):
        return f"{autograded} holds autograded submissions of {assignment}"
    return None


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
            raise ValueError(f"{what} {db_url}: the URL names the psycopg2 driver (SQLAlchemy before 2.1 reads a plain "
                             "postgresql:// so), which is not installed; psycopg 3 is (the postgres extra): write the URL as postgresql+psycopg://"
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
