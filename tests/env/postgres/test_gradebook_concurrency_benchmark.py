"""benchmarks/gradebook_concurrency.py still runs (it starts a PostgreSQL server of its own): at its smallest
size, bounded in time, as tests/house/test_benchmarks.py runs every script that needs no server."""
from __future__ import annotations

import pytest

from benchmark_helpers import benchmark, runs_at_its_smallest_size


@pytest.mark.parametrize("script", [benchmark("gradebook_concurrency")], ids=lambda p: p.stem)
def test_the_benchmark_runs_at_its_smallest_size(script, tmp_path):
    runs_at_its_smallest_size(script, tmp_path)
