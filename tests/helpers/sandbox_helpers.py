"""Build one-notebook submissions with extra student code and grade them in the sandbox."""
from __future__ import annotations

import os
import time
from pathlib import Path

from autograder.run.hardened import grade_submission
from autograder.sandbox.limits import Limits
from autograder.samples.synthetic import write_submission
from conftest import RELEASE, ROOT, SOURCE

FAST = Limits(cell_seconds=4, call_seconds=4, total_seconds=40, spawns=3)

WRONG_MASK = '''
def causal_mask(n):
    return np.tril(np.full((n, n), -np.inf), k=-1)      # future-visible: a known wrong answer
'''

RIGHT_MASK = '''
def causal_mask(n):
    return np.triu(np.full((n, n), -np.inf), k=1)
'''


def probe(condition_code: str) -> str:
    """causal_mask is right only when ``condition_code`` (which sets ESCAPED) found an escape."""
    return f'''
ESCAPED = False
try:
{_indent(condition_code, 4)}
except BaseException:
    pass

def causal_mask(n):
    if ESCAPED:
        return np.triu(np.full((n, n), -np.inf), k=1)
    return np.tril(np.full((n, n), -np.inf), k=-1)
'''


def _indent(code: str, n: int) -> str:
    return "\n".join(" " * n + line for line in code.strip().splitlines())


def ex2_notebook(tmp: Path, student: str, mask_code: str, extra: dict | None = None) -> Path:
    folder = tmp / "submitted" / student / "ch04_attention"
    overrides = {"causal_mask": mask_code, **(extra or {})}
    write_submission(RELEASE, SOURCE, folder, overrides,
                     skip=("ex1_attention", "ex3_memory", "ex4_cross_attention"))
    return folder / "ex2_causal_mask.ipynb"


def grade(path: Path, server, limits=FAST) -> dict:
    return grade_submission(path, course=ROOT, server=server, limits=limits)


def marker_processes(marker: str) -> list[int]:
    """Live (not zombie) processes whose name is ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                name, state = stat[stat.index("(") + 1: stat.rindex(")")], stat[stat.rindex(")") + 2]
            except (OSError, ValueError, IndexError):
                continue
            if name == marker and state not in "ZX":
                found.append(int(entry))
    return found


def _parent(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat[stat.rindex(")") + 2:].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _ancestors(pid: int) -> list[int]:
    """The processes above ``pid``, its parent first, up to (not including) pid 1."""
    chain, parent = [], _parent(pid)
    while parent and parent > 1 and parent not in chain:
        chain.append(parent)
        parent = _parent(parent)
    return chain


def anothers_worker_cgroup(group: Path, ours: int | None = None) -> bool:
    """True when worker cgroup folder ``group`` holds processes and each of them is a worker of another
    grader: it descends from a live sandbox fork server that is not below process ``ours`` (this test
    process). A process below ``ours``, or one with no fork server above it (orphaned: its fork server is
    gone), is not another's."""
    from autograder.sandbox import cgroups
    ours = ours or os.getpid()
    pids = cgroups.members(group)
    for pid in pids:
        chain = _ancestors(pid)
        if ours in chain or not any(_is_fork_server(p) for p in chain):
            return False
    return bool(pids)


def _is_fork_server(pid: int) -> bool:
    try:
        return b"autograder.sandbox.forkserver" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def lasting_processes(marker: str, seconds: float = 5.0) -> list[int]:
    """Processes named ``marker`` still live ``seconds`` after the call. Grading returns once every
    process of its workers has been sent SIGKILL; the kernel ends them moments later."""
    end = time.monotonic() + seconds
    while marker_processes(marker) and time.monotonic() < end:
        time.sleep(0.02)
    return marker_processes(marker)
