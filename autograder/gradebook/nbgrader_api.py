"""nbgrader's gradebook API, loaded without what a writer never uses, and used cheaply: a new SQLite
(or PostgreSQL) gradebook stamped in-process, and a block of writes as one transaction."""
from __future__ import annotations

import contextlib
import importlib.util
import sys
import types
from pathlib import Path

from .url import sqlite_path


def stamp_new_sqlite(db_url: str) -> None:
    """What nbgrader's Gradebook does for a new database (record the alembic head it was made
    at), done in-process: nbgrader asks a fresh `alembic heads` process, which takes seconds; and for a
    gradebook a failed first command left without it (``unstamped``)."""
    path = sqlite_path(db_url)
    if path is None:
        return
    import sqlite3
    if path.exists() and path.stat().st_size > 0:
        with contextlib.closing(sqlite3.connect(path)) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not unstamped(tables):
            return                                  # (alembic loads in about 0.1 s: only for a new one)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL);")
        db.execute("INSERT INTO alembic_version (version_num) VALUES (?);", (_alembic_head(),))


def unstamped(tables) -> bool:
    """nbgrader's tables without the alembic version nbgrader records beside them: what nbgrader's first command
    leaves when it cannot run ``alembic`` (its Gradebook makes the tables, then asks alembic for the version).
    The tables are nbgrader's models as they are now, so the head it would have recorded is the one to record."""
    return "assignment" in tables and "alembic_version" not in tables


def stamp_new(db_url: str) -> None:
    """``stamp_new_sqlite``, and the same for a new, empty database on a server (PostgreSQL); either way a
    gradebook nbgrader left without its version stamp (``unstamped``) gets it."""
    if sqlite_path(db_url) is not None or db_url.startswith("sqlite:"):
        stamp_new_sqlite(db_url)
        return
    from sqlalchemy import create_engine, inspect, text
    from sqlalchemy.pool import NullPool
    engine = create_engine(db_url, poolclass=NullPool)
    try:
        with engine.begin() as db:
            tables = inspect(db).get_table_names()
            if not tables or unstamped(tables):
                db.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
                db.execute(text("INSERT INTO alembic_version (version_num) VALUES (:v)"), {"v": _alembic_head()})
    finally:
        engine.dispose()


def _alembic_head() -> str:
    import nbgrader.api
    from alembic.script import ScriptDirectory
    return ScriptDirectory(str(Path(nbgrader.api.__file__).parent / "alembic")).get_current_head()


def nbgrader_api():
    """nbgrader's gradebook API (``nbgrader.api``), loaded without running nbgrader's package
    ``__init__``: that one registers nbgrader's Jupyter server extensions, importing jupyter_server,
    tornado's web stack and nbconvert, about half of this process's start-up, none of which a
    writer uses. nbgrader's modules import each other relatively, so the package object only needs
    its ``__path__`` (and ``__version__``, which nbgrader's apps read)."""
    if "nbgrader" not in sys.modules:
        spec = importlib.util.find_spec("nbgrader")
        if spec is None or spec.submodule_search_locations is None:
            raise SystemExit("nbgrader is not installed in this environment: pip install nbgrader")
        package = importlib.util.module_from_spec(spec)
        sys.modules["nbgrader"] = package
        from nbgrader._version import __version__
        package.__version__ = __version__
    # nbgrader.utils imports setuptools for its archive helpers, which a writer never calls: about
    # 0.1 s of CPU while the class is graded. They load when one is called.
    with defer_functions("setuptools.archive_util", ("unpack_archive", "unpack_tarfile", "unpack_zipfile")):
        import nbgrader.api
    return nbgrader.api


@contextlib.contextmanager
def defer_functions(module: str, names: tuple[str, ...]):
    """Within the block ``module`` is a stand-in that holds only ``names`` (``from module import name``
    then costs nothing); the first call of one imports the real module. The stand-in leaves
    ``sys.modules`` when the block ends, so that whatever imports ``module`` later (an instructor's
    late-penalty plugin importing setuptools, in the writer) gets the real one, whole."""
    if module in sys.modules:
        yield
        return
    shim = types.ModuleType(module)

    def real():
        if sys.modules.get(module) is shim:
            del sys.modules[module]
        return importlib.import_module(module)
    for name in names:
        setattr(shim, name, lambda *args, _name=name, **kwargs: getattr(real(), _name)(*args, **kwargs))
    sys.modules[module] = shim
    try:
        yield
    finally:
        if sys.modules.get(module) is shim:
            del sys.modules[module]


@contextlib.contextmanager
def one_transaction(gb):
    """The block's writes as one transaction: nbgrader's API commits after every row it creates
    (a student, a submission, each cell), and on SQLite each commit waits for the disk (88 commits,
    about 3 s, for a class of 12). Inside the block a commit only flushes (ids are assigned, queries
    see the rows); the block commits once at its end, or rolls back if it fails, so a failed block
    leaves the gradebook as it was."""
    session = gb.db
    session.commit = session.flush            # an attribute of this session object, for this block
    try:
        yield
    except BaseException:
        del session.commit
        session.rollback()
        raise
    del session.commit
    session.commit()


def new_course_gradebook(course: Path) -> None:
    """A new course's empty gradebook.db, stamped as nbgrader stamps one. nbgrader's own commands make it by
    running ``alembic`` from the PATH, which a venv's interpreter named in full (init's "Next:") does not put
    there: the first ``generate_assignment --force`` then failed after removing release/, leaving a gradebook
    without its version. `init` calls it only for a folder it made or found empty, so no run's gradebook is
    ever made afresh."""
    url = f"sqlite:///{course / 'gradebook.db'}"
    stamp_new_sqlite(url)
    nbgrader_api().Gradebook(url).close()        # nbgrader's tables beside the stamp (it sees one: no alembic)
