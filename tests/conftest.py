import functools
import importlib
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
TESTS = pathlib.Path(__file__).resolve().parent
# The corpora (fixtures, adversarial), the tests' helpers, and every test folder: a test module may import a
# few shared cases from another by its bare name (names are unique across the tree), whichever file runs alone.
for _path in (TESTS, TESTS / "helpers"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))
for _path in dict.fromkeys(p.parent for p in sorted(TESTS.glob("**/test_*.py"))):
    if str(_path) not in sys.path:
        sys.path.append(str(_path))

SOURCE = ROOT / "source" / "ch04_attention"
RELEASE = ROOT / "release" / "ch04_attention"
NOTEBOOKS = ["ex1_attention", "ex2_causal_mask", "ex3_memory", "ex4_cross_attention"]


@pytest.fixture(scope="session")
def server():
    """One sandbox fork server for the tests that grade submissions directly."""
    from autograder.sandbox.forkclient import ForkServer
    fork_server = ForkServer()
    yield fork_server
    fork_server.close()


@pytest.fixture(scope="session")
def graded_classes(tmp_path_factory):
    """Graded classes made once a run and copied for each test: ``graded_classes.copy(dest, students,
    **options)`` (tests/helpers/graded_classes.py)."""
    from graded_classes import GradedClasses, shared_root
    return GradedClasses(shared_root(tmp_path_factory))


@pytest.fixture(scope="session")
def postgres():
    """A real PostgreSQL server (the distribution's) in a temporary folder on a Unix socket, stopped
    after the session; each test makes its own database (``postgres.create_database``)."""
    from pg_server import PgServer
    why = PgServer.unavailable()
    if why:
        pytest.skip(why)
    pg = PgServer().start()
    yield pg
    pg.close()


EXERCISE_MARKERS = {"ex1": "ex1_attention", "ex2": "ex2_causal", "ex3": "ex3_memory", "ex4": "ex4_cross"}


# Markers by where a test lives, never by hand: tests/env/<kind>/ holds every test that starts a server, a
# browser or an nbgrader kernel (`env` and its kind); `make check` runs the rest.
ENVIRONMENTS = ("hub", "postgres", "browser", "dask", "nbgrader", "lti")


def pytest_collection_modifyitems(items):
    """A test under tests/env/<kind>/ carries the markers ``env`` and ``<kind>``; a test whose id names an
    exercise (a notebook, grade id or fixture) carries that exercise's marker, so `pytest -m ex2_causal`
    runs everything about exercise 2. The slowest files come first (SLOWEST_FIRST)."""
    for item in items:
        path = pathlib.Path(str(item.fspath))
        parts = path.relative_to(TESTS).parts if path.is_relative_to(TESTS) else ()
        if parts[:1] == ("env",):
            item.add_marker(pytest.mark.env)
            item.add_marker(getattr(pytest.mark, parts[1]))
        elif "postgres" in getattr(item, "fixturenames", ()):
            raise pytest.UsageError(f"{item.nodeid} starts a PostgreSQL server (the postgres fixture): its place "
                                    "is tests/env/postgres/, which `make check` leaves out")
        for prefix, marker in EXERCISE_MARKERS.items():
            if prefix in item.nodeid or _fixture_exercise(item) == prefix:
                item.add_marker(getattr(pytest.mark, marker))
    items.sort(key=_slowest_first)


# The slowest files, slowest first (each one's CPU-seconds in a full run, its processes' included, measured in
# a cpuacct cgroup per test process: docs/development/tests.md says how to measure them again). Under pytest-xdist
# (`make test`: --dist loadfile --no-loadscope-reorder) a test process takes a whole file at a time, in this
# order: the long files start at once, side by side, and the run ends on short ones. Every other file
# follows in collection order.
SLOWEST_FIRST = (
    "env/hub/test_jupyterhub.py",
    "env/nbgrader/test_course_agreement.py",
    "env/nbgrader/test_wheel_install.py",
    "run/test_faults.py",
    "run/test_stop_writing.py",
    "env/nbgrader/test_nbgrader_doors.py",
    "sandbox/test_adversarial.py",
    "env/dask/test_dask_memory_cap.py",
    "house/test_benchmarks.py",
    "misconceptions/test_diagnosis_corpus.py",
    "env/postgres/test_semester_commands.py",
    "env/nbgrader/test_hub_layout_doors.py",
    "env/nbgrader/test_reweight_after_release.py",
    "env/dask/test_dask_faults.py",
    "run/test_regrade.py",
    "env/postgres/test_gradebook_kill.py",
    "env/nbgrader/test_course_exchange.py",
)
_RANK = {name: rank for rank, name in enumerate(SLOWEST_FIRST)}

# Long files whose tests share nothing a module or class builds (each test builds what it reads; the session's
# fixtures are per test process): under `make test` each of their tests is a unit of pytest-xdist's work of its
# own, so such a file no longer holds one test process for all its tests' time. Every other file is one unit.
APART = (
    "env/postgres/test_semester_commands.py",
    "env/dask/test_dask_faults.py",
    "env/nbgrader/test_course_exchange.py",
    "env/postgres/test_gradebook_kill.py",
    "run/test_regrade.py",
)


def pytest_xdist_make_scheduler(config, log):
    """--dist loadfile, but a test of a file in APART is a unit alone (pytest-xdist's loadgroup, which could
    say the same with markers, groups nothing under pytest 9.2: pytest-dev/pytest-xdist#1386)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FilesAndApart(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = nodeid.split("::", 1)[0]
            return nodeid if file.removeprefix("tests/") in APART else file

    return FilesAndApart(config, log)


def _slowest_first(item) -> int:
    path = pathlib.Path(str(item.fspath))
    return _RANK.get(path.relative_to(TESTS).as_posix(), len(_RANK)) if path.is_relative_to(TESTS) else len(_RANK)


def _fixture_exercise(item) -> str | None:
    name = getattr(item, "callspec", None) and item.callspec.params.get("name")
    if not isinstance(name, str) or "fixtures" in str(item.fspath):
        return None
    return _exercise_a_fixture_loses(name)


@functools.cache
def _exercise_a_fixture_loses(name: str) -> str | None:
    try:
        loses = importlib.import_module(f"fixtures.impl.{name}").LOSES
    except (ImportError, AttributeError):
        return None
    return next(iter(loses))[:3] if loses else None
