"""A submission that exhausts a grading process's memory costs that submission only, whatever the class
size and wherever it is graded (issue 29, item 2).

The killer is a notebook holding one long string with one astral character (Python then holds each of its
characters in 4 bytes). A class of 5 is graded, the small class that was graded in the run's own process:
the killer took the run down with it, and no classmate got a grade. Intake now budgets what it decodes
(268 MB a notebook): a 160 MB killer is refused before it is decoded (``REFUSED``); one of 63 MB is
decoded, and under a cap smaller than what decoding it costs (``SMALL_CAP``, ``CHECK_CAP``) it exhausts its
grading process, which dies twice, the second time alone (``DIED``). Both through ``grade`` under a real
memory cap (a cgroup v1 memory controller, as root), the second through ``check``. On a Dask worker with a
memory limit (its nanny ends it), a killer whose functions each return 64 MiB to the grading process is graded
first, in the middle and last of the class, on one cluster, an honest classmate sharing its worker each time.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from autograder.assignment import FUNCTIONS
from batch_helpers import gradebook_in, make_class, records

A = "ch04_attention"
MEMORY = Path("/sys/fs/cgroup/memory")
HONEST = {"correct-1": 28, "no-scaling": 26, "honest-2": 28, "honest-3": 28}
DIED = "A grading process died twice on this submission, graded alone the second time"
REFUSED = "of the grader's memory once decoded"
DECODED_MB = 63          # decoded at 4 bytes a character: 252 MiB, under intake's 268 MB
# measured with cgroup v1's max_usage: ``grade`` of the honest class of 5 peaks near 260 MB, with the 63 MB
# killer near 490 MB; ``check`` of an honest submission near 205 MB, of the killer near 395 MB (340 MB where
# it is graded in the run's own process, as it was: under CHECK_CAP that run is killed)
SMALL_CAP = 340 << 20
CHECK_CAP = 300 << 20


def plant_killer(folder: Path, megabytes: int) -> None:
    """A markdown cell of ``megabytes`` MB of text with one astral character, first in ex1's notebook; the
    test process never holds the string (it is written a megabyte at a time)."""
    path = folder / "ex1_attention.ipynb"
    head, tail = path.read_text().split('"cells": [', 1)
    with open(path, "w") as f:
        f.write(head + '"cells": [{"cell_type": "markdown", "metadata": {}, "source": "\U0001F600')
        for _ in range(megabytes):
            f.write("a" * (1 << 20))
        f.write('"}, ' + tail)


def _class(tmp_path: Path, megabytes: int = 160, killer: dict | None = None, killers=("killer",)) -> Path:
    """The honest class and ``killers``: each plants a notebook of ``megabytes`` unless ``killer`` is the
    killers' own code."""
    custom = {s: {} for s in HONEST if s not in ("correct-1", "no-scaling")}
    course = make_class(tmp_path, ["correct-1", "no-scaling"], custom={**custom, **dict.fromkeys(killers, killer or {})})
    for name in killers if killer is None else ():
        plant_killer(course / "submitted" / name / A, megabytes)
    return course


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


def _assert_only_the_killer_charged(got: dict[str, dict], why: str, killer: str = "killer", honest=HONEST) -> None:
    assert {s: got[s]["total"] for s in honest} == honest
    assert not any(got[s]["needs_review"] for s in honest)
    killer = got[killer]
    assert killer["needs_review"] and any(why in line for line in killer["integrity"]), killer["integrity"]
    assert killer["total"] == 0 if why == DIED else killer["total"] < 28       # refused: ex1 alone is not graded


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


KILLERS = ["a-killer", "k-killer", "z-killer"]      # first, in the middle, last of the class, in grading order
# Every function returns 64 MiB, the sandbox's limit on one call's result, which the grading process receives.
# Measured with /proc's VmHWM: a Dask worker grading the honest class peaks near 85 MB, one grading this killer
# near 800 MB (over 235 MiB within a second of its first call) before the budget on result bytes; now each
# notebook's first result arrives and no other (Limits.received_bytes: 256 MiB, a quarter a notebook, the four
# at once), which with its copies still takes a worker past this limit (in-process: 516 MB against 75 MB). The notebook killer above will not do here:
# every grading process reads the class once for its copy checks, the killer's notebook with it (330 MB).
RETURNS_64_MIB = {f: f"def {f}(*args, **kwargs):\n    return np.zeros(8 << 20)\n"
                  for f in sorted({f for names in FUNCTIONS.values() for f in names})}
WORKER_LIMIT = "260MB"   # its nanny samples the worker every 100 ms and ends it over 95%
WORKER_ENV = {"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0",
              "DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION": "1.0",      # a task a thread: one classmate shares
              # only the nanny's limit: a worker paused over 80% (memory Python keeps after a task) ran nothing more
              **{f"DASK_DISTRIBUTED__WORKER__MEMORY__{k}": "False" for k in ("TARGET", "SPILL", "PAUSE")}}


def test_dask_worker_with_a_memory_limit_charges_the_killer_alone(tmp_path):
    """The killer exhausts a memory-limited Dask worker it shares with an honest classmate (two threads on
    one worker, a task a thread; allowed-failures 0: a task lost with a dying worker is the grader's to retry
    alone): the worker's nanny ends it, the killer is retried alone, kills it again and is charged; the
    classmate lost with it is graded. Three classes on one cluster, the killer first, in the middle and last."""
    pytest.importorskip("distributed")
    from autograder.run.batch import grade_batch
    from dask_helpers import Cluster
    course, honest = _class(tmp_path, killer=RETURNS_64_MIB, killers=KILLERS), {"correct-1": 28, "no-scaling": 26}
    cluster = Cluster(tmp_path, WORKER_ENV, workers=1, worker=("--nthreads", "2", "--memory-limit", WORKER_LIMIT))
    try:
        for killer in KILLERS:
            out = tmp_path / killer
            grade_batch(course=course, out=out, scheduler=cluster.address, progress=False, outputs=False,
                        students=[*honest, killer])
            _assert_only_the_killer_charged(records(out), DIED, killer, honest)
        restarts = cluster.client.get_events("worker-restart-memory")
    finally:
        cluster.close()
    assert len(restarts) == 2 * len(KILLERS), restarts            # the limit ended the worker, twice a killer
    lost = cluster.log.read_text().count("workers died while trying to run it")
    assert lost > len(restarts), "no honest classmate was ever on the dying worker"
