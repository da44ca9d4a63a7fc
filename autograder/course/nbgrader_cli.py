"""Run nbgrader's own command line from this environment (its tools, e.g. alembic, on PATH)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def tool_env(**extra: str) -> dict:
    env = dict(os.environ, **extra)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def run_nbgrader(args: list[str], cwd: Path, what: str, timeout: float | None = None) -> subprocess.CompletedProcess:
    """``python -m nbgrader ARGS`` in ``cwd``; raises RuntimeError with nbgrader's output on failure."""
    proc = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=tool_env(),
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"nbgrader {what} failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc
