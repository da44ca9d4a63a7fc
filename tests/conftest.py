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
    runs everything about exercise 2."""
    for item in items:
        path = pathlib.Path(str(item.fspath))
        parts = path.relative_to(TESTS).parts if path.is_relative_to(TESTS) else ()
        if parts[:1] == ("env",):
            item.add_marker(pytest.mark.env)
            item.add_marker(getattr(pytest.mark, parts[1]))
        for prefix, marker in EXERCISE_MARKERS.items():
            if prefix in item.nodeid or _fixture_exercise(item) == prefix:
                item.add_marker(getattr(pytest.mark, marker))


def _fixture_exercise(item) -> str | None:
    name = getattr(item, "callspec", None) and item.callspec.params.get("name")
    if not isinstance(name, str) or "fixtures" in str(item.fspath):
        return None
    try:
        import importlib
        loses = importlib.import_module(f"fixtures.impl.{name}").LOSES
    except (ImportError, AttributeError):
        return None
    return next(iter(loses))[:3] if loses else None
