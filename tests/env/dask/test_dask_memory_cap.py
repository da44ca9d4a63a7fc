"""A submission that exhausts a memory-limited Dask worker costs that submission only (issue 29, item 2;
the grading process's own memory cap: tests/run/test_memory_cap.py).

On a Dask worker with a memory limit (its nanny ends it), a killer whose functions each return 64 MiB to the
grading process is graded first, in the middle and last of the class, on one cluster, with honest classmates
on the same worker each time.
"""
from __future__ import annotations

import time

import pytest

from autograder.assignment import FUNCTIONS
from autograder.run.dask import dask_key
from autograder.samples.synthetic import write_submission
from batch_helpers import records
from memory_cap_helpers import A, DIED, class_with_killers, only_the_killer_charged

KILLERS = ["a-killer", "k-killer", "z-killer"]      # first, in the middle, last of the class, in grading order
# Every function returns 64 MiB, the sandbox's limit on one call's result, which the grading process receives.
# Measured with /proc's VmHWM: a Dask worker grading the honest class peaks near 85 MB, one grading this killer
# near 800 MB (over 235 MiB within a second of its first call) before the budget on result bytes; now each
# notebook's first result arrives and no other (Limits.received_bytes: 256 MiB, a quarter a notebook, the four
# at once), which with its copies still takes a worker past this limit (in-process: 516 MB against 75 MB). The
# notebook killer of tests/run/test_memory_cap.py will not do here: every grading process reads the class once
# for its copy checks, the killer's notebook with it (330 MB).
RETURNS_64_MIB = {f: f"def {f}(*args, **kwargs):\n    return np.zeros(8 << 20)\n"
                  for f in sorted({f for names in FUNCTIONS.values() for f in names})}
# An honest classmate still grading when the killer ends the worker, wherever the killer is in the class: the
# whole class is in flight at once (a thread each), and its right answers come after two cells of 8 s each
# (within the 10 s a cell may take), far longer than the killer takes to end the worker (about a second of its
# first call on an idle machine; 5 s was not always enough under a load of 15), so it is on the dying worker
# every time.
SLOW = "slow-honest"
SLEEPS = {f: "import time\ntime.sleep(8)\n" for f in ("causal_mask", "causal_attention")}
HONEST = {"correct-1": 28, "no-scaling": 26, SLOW: 28}
WORKER_LIMIT = "260MB"   # its nanny samples the worker every 100 ms and ends it over 95%
WORKER_ENV = {"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0",
              "DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION": "1.0",      # a task a thread
              # only the nanny's limit: a worker paused over 80% (memory Python keeps after a task) ran nothing more
              **{f"DASK_DISTRIBUTED__WORKER__MEMORY__{k}": "False" for k in ("TARGET", "SPILL", "PAUSE")}}


def _events(cluster, topic: str, count: int, within: float = 30.0) -> list:
    """The scheduler's events on ``topic`` once ``count`` have come (a nanny sends its own as it restarts
    its worker: one may reach the scheduler after the run heard its task was lost), or all after ``within``."""
    deadline = time.monotonic() + within
    while len(events := cluster.client.get_events(topic)) < count and time.monotonic() < deadline:
        time.sleep(0.2)
    return list(events)


def test_dask_worker_with_a_memory_limit_charges_the_killer_alone(tmp_path):
    """The killer exhausts a memory-limited Dask worker it shares with honest classmates (one worker, a thread
    a task, the whole class at once; allowed-failures 0: a task lost with a dying worker is the grader's to
    retry alone): the worker's nanny ends it, the killer is retried alone, kills it again and is charged; the
    classmates lost with it are graded. Three classes on one cluster, the killer first, in the middle and last."""
    pytest.importorskip("distributed")
    from autograder.run.batch import grade_batch
    from dask_helpers import Cluster
    course = class_with_killers(tmp_path, killer=RETURNS_64_MIB, killers=KILLERS)
    write_submission(course / "release" / A, course / "source" / A, course / "submitted" / SLOW / A, SLEEPS)
    cluster = Cluster(tmp_path, WORKER_ENV, workers=1,
                      worker=("--nthreads", str(len(HONEST) + 1), "--memory-limit", WORKER_LIMIT))
    try:
        for killer in KILLERS:
            out = tmp_path / killer
            grade_batch(course=course, out=out, scheduler=cluster.address, progress=False, outputs=False,
                        students=[*HONEST, killer])
            only_the_killer_charged(records(out), DIED, killer, HONEST)
        restarts = _events(cluster, "worker-restart-memory", 2 * len(KILLERS))
    finally:
        cluster.close()
    assert len(restarts) == 2 * len(KILLERS), restarts            # the limit ended the worker, twice a killer
    lost = [line for line in cluster.log.read_text().splitlines() if "workers died while trying to run it" in line]
    assert len(lost) > len(restarts), "no honest classmate was ever on the dying worker"
    assert len([line for line in lost if dask_key(SLOW) in line]) == len(KILLERS), lost   # once a class
