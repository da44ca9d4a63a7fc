"""Every script in benchmarks/ still runs: each at its smallest size (``--smoke``), bounded in time. The
figures a smoke run prints mean nothing; that it prints them, and ends well, is what is checked (a
script that read a line the grader no longer prints failed with IndexError, and its figures could not
be reproduced). The scripts that need a server run with their environment's tests (ELSEWHERE)."""
from __future__ import annotations

import pytest

from benchmark_helpers import BENCHMARKS, runs_at_its_smallest_size

ELSEWHERE = {"hub_rush": "tests/env/hub/test_jupyterhub.py (on the suite's one Hub)",
             "gradebook_concurrency": "tests/env/postgres/test_gradebook_concurrency_benchmark.py (PostgreSQL)"}


@pytest.mark.parametrize("script", [b for b in BENCHMARKS if b.stem not in ELSEWHERE], ids=lambda p: p.stem)
def test_the_benchmark_runs_at_its_smallest_size(script, tmp_path):
    runs_at_its_smallest_size(script, tmp_path)


def test_there_are_benchmarks_to_run():
    assert len(BENCHMARKS) >= 7
    assert {b.stem for b in BENCHMARKS} >= set(ELSEWHERE), "a benchmark run elsewhere is gone: update ELSEWHERE"
