"""The linter (ruff) and the type checker (mypy, strict on the contract modules) as pyproject.toml configures
them: a finding of either fails here, so both are clean in ``make check``. Each runs as a subprocess of this
venv, as a developer runs it (``.venv/bin/ruff check .``, ``.venv/bin/mypy``)."""
from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = ["autograder.records.*", "autograder.run.job", "autograder.journal.events",
             "autograder.gradebook.messages", "autograder.sandbox.status"]


def _run(*args: str) -> subprocess.CompletedProcess:
    """(mypy reads numpy's and nbgrader's stubs too: about 25 s of CPU without its cache, .mypy_cache/)"""
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=900)


def test_ruff_finds_nothing():
    done = _run("ruff", "check", ".")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_mypy_finds_nothing_in_the_contract_modules():
    done = _run("mypy")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Success: no issues found" in done.stdout


def test_the_contract_modules_are_checked_strictly():
    """Strict on records (with findings), jobs, journal events, writer messages and statuses; each is among
    the files mypy checks (a module left out of ``files`` would be strict and never read)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    [strict] = [o for o in config["overrides"] if o.get("strict")]
    assert sorted(strict["module"]) == sorted(CONTRACTS)
    files = {f.removesuffix(".py").replace("/", ".") for f in config["files"]}
    assert all(m.removesuffix(".*") in files for m in CONTRACTS)


def test_mypy_would_find_a_loose_signature(tmp_path):
    """The check can fail: an unannotated function in a contract module is an error under strict."""
    module = tmp_path / "autograder" / "records"
    module.mkdir(parents=True)
    (tmp_path / "autograder" / "__init__.py").write_text("")
    (module / "__init__.py").write_text("")
    (module / "loose.py").write_text("def loose(value):\n    return value\n")
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", "/dev/null",
                           "--config-file", str(ROOT / "pyproject.toml"), "autograder/records/loose.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "no-untyped-def" in done.stdout, done.stdout
