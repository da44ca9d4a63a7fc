"""Run a benchmark script at its smallest size (``--smoke``), for tests/house/test_benchmarks.py and the
environments' files that run the scripts needing a server (tests/env/<kind>/)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT

BENCHMARKS = sorted((ROOT / "benchmarks").glob("*.py"))
LIMIT_S = 240                     # one script's bound (each takes seconds on an idle 2-core machine)


def benchmark(name: str) -> Path:
    return ROOT / "benchmarks" / f"{name}.py"


def runs_at_its_smallest_size(script: Path, cwd: Path) -> None:
    """``script --smoke`` ends well, within LIMIT_S, and prints its figures. The figures a smoke run prints
    mean nothing; that it prints them, and ends well, is what is checked."""
    done = subprocess.run([sys.executable, str(script), "--smoke"], capture_output=True, text=True,
                          timeout=LIMIT_S, cwd=cwd)
    assert done.returncode == 0, f"{script.name} --smoke ended with {done.returncode}:\n{done.stderr[-3000:]}"
    assert done.stdout.strip(), f"{script.name} --smoke printed nothing"
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
