"""A submission that exhausts a grading process's memory costs that submission only, whatever the class
size and wherever it is graded (issue 29, item 2).

The killer is a notebook holding one long string with one astral character (Python then holds each of its
characters in 4 bytes). A class of 5 is graded, the small class that was graded in the run's own process:
the killer took the run down with it, and no classmate got a grade. Intake now budgets what it decodes
(268 MB a notebook): a 160 MB killer is refused before it is decoded (``REFUSED``); one of 63 MB is
decoded, and under a cap smaller than what decoding it costs (``SMALL_CAP``, ``CHECK_CAP``) it exhausts its
grading process, which dies twice, the second time alone (``DIED``). Both through ``grade`` under a real
memory cap (a cgroup v1 memory controller, as root), the second through ``check``. On a Dask worker with a
memory limit: tests/env/dask/test_dask_memory_cap.py.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from batch_helpers import gradebook_in, records
from memory_cap_helpers import A, DIED, HONEST, class_with_killers as _class
from memory_cap_helpers import only_the_killer_charged as _assert_only_the_killer_charged

MEMORY = Path("/sys/fs/cgroup/memory")
REFUSED = "of the grader's memory once decoded"
DECODED_MB = 63          # decoded at 4 bytes a character: 252 MiB, under intake's 268 MB
# measured with cgroup v1's max_usage: ``grade`` of the honest class of 5 peaks near 260 MB, with the 63 MB
# killer near 490 MB; ``check`` of an honest submission near 205 MB, of the killer near 395 MB (340 MB where
# it is graded in the run's own process, as it was: under CHECK_CAP that run is killed)
SMALL_CAP = 340 << 20
CHECK_CAP = 300 << 20


@pytest.fixture
def capped(tmp_path):
    """A memory cgroup (1.2 GB unless ``limit`` says): a process started in it (``preexec_fn``) and its
    children are killed by the kernel when together they need more."""
    if os.geteuid() != 0 or not os.access(MEMORY, os.W_OK):
        pytest.skip("needs root and a writable cgroup v1 memory controller")
    group = MEMORY / f"autograder-test-{uuid.uuid4().hex[:8]}"
    group.mkdir()
    procs = str(group / "cgroup.procs")

    def cap(limit: int = 1200 << 20):
        (group / "memory.limit_in_bytes").write_text(str(limit))
        return lambda: Path(procs).write_text(str(os.getpid()))
    yield cap
    for pid in (group / "cgroup.procs").read_text().split():
        try:
            os.kill(int(pid), 9)
        except ProcessLookupError:
            pass
    for _ in range(100):
        try:
            group.rmdir()
            break
        except OSError:
            import time
            time.sleep(0.1)


def _run(args, preexec, timeout=240):
    return subprocess.run([sys.executable, "-m", "autograder", *args], capture_output=True, text=True,
                          timeout=timeout, preexec_fn=preexec)


@pytest.mark.parametrize("megabytes, limit, why", [(160, 1200 << 20, REFUSED), (DECODED_MB, SMALL_CAP, DIED)],
                         ids=["refused-by-intake", "kills-its-grading-process"])
def test_grade_under_a_memory_cap_charges_the_killer_alone(tmp_path, capped, megabytes, limit, why):
    course, out = _class(tmp_path, megabytes=megabytes), tmp_path / "out"
    done = _run(["grade", "--course", str(course), "--out", str(out), "--gradebook", gradebook_in(out),
                 "--create-gradebook"], capped(limit))
    assert done.returncode == 0, done.stderr[-3000:]
    _assert_only_the_killer_charged(records(out), why)
    rows = (out / "grades.csv").read_text()
    assert all(s in rows for s in [*HONEST, "killer"])


def test_check_under_a_memory_cap_says_the_submission_killed_its_grader(tmp_path, capped):
    course = _class(tmp_path, megabytes=DECODED_MB)
    done = _run(["check", str(course / "submitted" / "killer" / A), "--json"], capped(CHECK_CAP))
    assert done.returncode == 0, done.stderr[-3000:]
    record = json.loads(done.stdout)
    assert record["needs_review"] and record["total"] == 0 and DIED in record["integrity"][0]

