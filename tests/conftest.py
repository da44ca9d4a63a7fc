import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
TESTS = pathlib.Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

SOURCE = ROOT / "source" / "ch04_attention"
RELEASE = ROOT / "release" / "ch04_attention"
NOTEBOOKS = ["ex1_attention", "ex2_causal_mask", "ex3_memory", "ex4_cross_attention"]


@pytest.fixture(scope="session")
def server():
    """One sandbox fork server for the tests that grade submissions directly."""
    from autograder.sandbox.session import ForkServer
    fork_server = ForkServer()
    yield fork_server
    fork_server.close()
