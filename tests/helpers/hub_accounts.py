"""Real Linux accounts for the JupyterHub tests: made with useradd, given passwords with chpasswd, removed
with userdel, their processes ended by uid (only accounts this test made), and the paths their Python
needs opened to them for the test's duration only.

Everything here needs root. Names carry a random tag, so two runs (or another helper's accounts) never
meet; a test that fails still removes its accounts and restores every mode it changed.
"""
from __future__ import annotations

import os
import pwd
import secrets
import signal
import stat
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path


def _run(*cmd: str, stdin: str | None = None) -> None:
    done = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=60)
    if done.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()}")


def processes_of(uids: set[int]) -> list[int]:
    """Live processes whose real uid is one of ``uids``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields.get("State", "").strip().startswith(("Z", "X")):
            continue
        if int(fields.get("Uid", "-1").split()[0]) in uids:
            found.append(int(entry))
    return found


def end_processes_of(uids: set[int], within: float = 10) -> list[int]:
    """SIGKILL every process of ``uids`` (accounts this test made, so every one is ours); returns the
    pids that were still alive when called."""
    left = processes_of(uids)
    deadline = time.monotonic() + within
    while True:
        alive = processes_of(uids)
        if not alive or time.monotonic() > deadline:
            return left
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)


class Accounts:
    """Accounts ``{role: name}`` with homes under ``homes`` and a password each."""

    def __init__(self, roles: list[str], homes: Path):
        tag = secrets.token_hex(3)
        self.names = {role: f"{role}{tag}" for role in roles}
        self.passwords = {name: secrets.token_urlsafe(12) for name in self.names.values()}
        self.homes = homes
        self.made: list[str] = []

    def __getitem__(self, role: str) -> str:
        return self.names[role]

    def create(self) -> None:
        self.homes.mkdir(parents=True, exist_ok=True)
        self.homes.chmod(0o755)
        for name in self.names.values():
            _run("useradd", "--create-home", "--home-dir", str(self.homes / name), "--shell", "/bin/bash",
                 "--user-group", name)
            self.made.append(name)
            (self.homes / name).chmod(0o700)   # the exchange cache holds the secrets that name feedback pages
        _run("chpasswd", stdin="".join(f"{n}:{p}\n" for n, p in self.passwords.items()))

    def uid(self, name: str) -> int:
        return pwd.getpwnam(name).pw_uid

    def uids(self) -> set[int]:
        found = set()
        for name in self.made:
            try:
                found.add(self.uid(name))
            except KeyError:
                pass
        return found

    def remove(self) -> list[str]:
        """End every process of the accounts and delete them with their homes; returns what was left
        running (as 'pid: command') so a test can say so."""
        uids = self.uids()
        left = [f"{pid}: {_cmdline(pid)}" for pid in end_processes_of(uids)]
        problems = []
        for name in self.made:
            try:
                _run("userdel", "--remove", "--force", name)
            except RuntimeError as exc:
                problems.append(str(exc))
        self.made.clear()
        if problems:
            raise RuntimeError("; ".join(problems))
        return left


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return "?"


def python_paths(checkout: bool = True) -> list[Path]:
    """Every folder from / down to the interpreter, and (``checkout``) this venv and this checkout: what an account
    must be able to traverse to run this venv's Python (pyenv keeps Python under /root, which is 0700); without
    the checkout, what it needs to run an environment of its own made from the same interpreter."""
    targets = [Path(sys.executable).resolve().parent]
    if checkout:
        targets += [Path(sys.prefix), Path(__file__).resolve().parents[2]]
    folders: set[Path] = set()
    for target in targets:
        folders.update([target, *target.parents])
    return sorted(folders)


@contextmanager
def closed_to_others(path: Path):
    """No permission for others on ``path`` (a folder: nothing below it can be reached by another account),
    put back as it was afterwards, even when the test fails."""
    mode = stat.S_IMODE(path.stat().st_mode)
    path.chmod(mode & ~0o007)
    try:
        yield path
    finally:
        path.chmod(mode)


@contextmanager
def traversable(paths: list[Path]):
    """Add o+x to each folder in ``paths`` that lacks it (never o+r: nothing becomes listable), and put
    back every mode as it was afterwards, even when the test fails."""
    changed: list[tuple[Path, int]] = []
    try:
        for path in paths:
            mode = stat.S_IMODE(path.stat().st_mode)
            if not mode & stat.S_IXOTH:
                path.chmod(mode | stat.S_IXOTH)
                changed.append((path, mode))
        yield [p for p, _ in changed]
    finally:
        for path, mode in reversed(changed):
            path.chmod(mode)
