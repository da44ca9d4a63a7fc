"""cgroup pids and memory limits for one worker (v2 unified or v1 controllers), when running as root.

Every path starts at ``ROOT``, read at call time, so the logic for each layout (pure v2,
v2 mounted at ``unified/`` beside v1, v1 controllers) can be tested against a fake tree.
"""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
GROUP = "autograder"


def _v2_root() -> Path | None:
    for base in (ROOT, ROOT / "unified"):
        ctrl = base / "cgroup.controllers"
        if ctrl.exists() and {"pids", "memory"} <= set(ctrl.read_text().split()):
            return base
    return None


def _v1_roots() -> dict[str, Path]:
    return {c: ROOT / c for c in ("pids", "memory") if (ROOT / c / "cgroup.procs").exists()}


def _is_root() -> bool:
    return os.geteuid() == 0


def available() -> str | None:
    """'v2', 'v1' or None (not root, or no writable pids+memory controllers)."""
    if not _is_root():
        return None
    v2 = _v2_root()
    if v2 and os.access(v2, os.W_OK):
        return "v2"
    roots = _v1_roots()
    if len(roots) == 2 and all(os.access(p, os.W_OK) for p in roots.values()):
        return "v1"
    return None


def create(name: str, pids_max: int, memory_bytes: int) -> list[Path]:
    """Make the worker's cgroup(s) and set limits; returns the directories."""
    kind = available()
    if kind == "v2":
        parent = _v2_root() / GROUP
        parent.mkdir(exist_ok=True)
        _try_write(parent / "cgroup.subtree_control", "+pids +memory")
        d = parent / name
        d.mkdir()
        (d / "pids.max").write_text(str(pids_max))
        (d / "memory.max").write_text(str(memory_bytes))
        _try_write(d / "memory.swap.max", "0")
        return [d]
    if kind == "v1":
        dirs = []
        for ctrl, base in _v1_roots().items():
            d = base / GROUP / name
            d.mkdir(parents=True)
            if ctrl == "pids":
                (d / "pids.max").write_text(str(pids_max))
            else:
                (d / "memory.limit_in_bytes").write_text(str(memory_bytes))
                _try_write(d / "memory.memsw.limit_in_bytes", str(memory_bytes))
            dirs.append(d)
        return dirs
    return []


def join(dirs: list[Path], pid: int = 0) -> None:
    for d in dirs:
        (d / "cgroup.procs").write_text(str(pid or os.getpid()))


def kill_all(dirs: list[Path], timeout: float = 5.0) -> bool:
    """SIGKILL every process in the cgroup until it is empty; remove it. True when empty."""
    end = time.monotonic() + timeout
    empty = True
    for d in dirs:
        while d.exists():
            if not signal_members(d):
                break
            if time.monotonic() > end:
                empty = False
                break
            time.sleep(0.001)
        try:
            d.rmdir()
        except OSError:
            pass
    return empty


def signal_members(d: Path) -> list[int]:
    """SIGKILL every process in cgroup folder ``d`` once, without waiting; returns their pids."""
    pids = _procs(d)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return pids


def members(d: Path) -> list[int]:
    """The pids in cgroup folder ``d`` (none when it is gone)."""
    return _procs(d)


def _procs(d: Path) -> list[int]:
    try:
        return [int(p) for p in (d / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def _try_write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError:
        pass


def _group_bases() -> list[Path]:
    """The folders that hold one cgroup folder per worker, on whichever layout this machine has."""
    v2 = _v2_root()
    return ([v2 / GROUP] if v2 else []) + [base / GROUP for base in _v1_roots().values()]


def find(name: str) -> list[Path]:
    """The cgroup directories a worker called ``name`` created (for clean-up by the grader)."""
    return [d for d in (base / name for base in _group_bases()) if d.exists()]


def worker_dirs() -> list[Path]:
    """Every worker cgroup folder that exists now, live or left over."""
    return [d for base in _group_bases() if base.is_dir() for d in base.iterdir() if d.is_dir()]


def prune(older_than: float = 600.0) -> None:
    """Remove empty worker cgroups left by graders that were killed (never a live one)."""
    now = time.time()
    for d in worker_dirs():
        try:
            if now - d.stat().st_mtime > older_than and not _procs(d):
                d.rmdir()
        except OSError:
            pass
