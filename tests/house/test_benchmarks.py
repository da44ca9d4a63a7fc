"""Every script in benchmarks/ still runs: each at its smallest size (``--smoke``), bounded in time. The
figures a smoke run prints mean nothing; that it prints them, and ends well, is what is checked (a
script that read a line the grader no longer prints failed with IndexError, and its figures could not
be reproduced)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parents[2] / "benchmarks").glob("*.py"))
LIMIT_S = 240                     # one script's bound (each takes seconds on an idle 2-core machine)
NEEDS_ROOT = {"hub_rush"}         # real accounts and a Hub that starts servers as them, as tests/env/hub/test_jupyterhub.py


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.stem)
def test_the_benchmark_runs_at_its_smallest_size(script, tmp_path):
    if script.stem in NEEDS_ROOT and os.geteuid() != 0:
        pytest.skip(f"{script.name} needs root: it creates Linux accounts and runs a JupyterHub")
    done = subprocess.run([sys.executable, str(script), "--smoke"], capture_output=True, text=True,
                          timeout=LIMIT_S, cwd=tmp_path)
    assert done.returncode == 0, f"{script.name} --smoke ended with {done.returncode}:\n{done.stderr[-3000:]}"
    assert done.stdout.strip(), f"{script.name} --smoke printed nothing"
    assert "Traceback" not in done.stderr, done.stderr[-3000:]


def test_there_are_benchmarks_to_run():
    assert len(BENCHMARKS) >= 7
