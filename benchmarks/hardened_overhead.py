"""Per-submission overhead of the hardened path (a script, not a test).

    .venv/bin/python benchmarks/hardened_overhead.py [--n 30] [--smoke]

Grades the reference solution (all four notebooks) N times through a warm
fork server with every available isolation layer, exactly as the grader does
(``grade_submission``: intake, then one worker per notebook, the four side by
side, running the cells and answering the rubric's calls), and prints the
median wall time per submission and of intake alone. Side by side, in
alternating blocks of 10, the same through a fork server that keeps no
worker ready (each notebook starts its own, as before the pool). The reference functions
compute in microseconds, so the times are the grader's own overhead. The same rubric run in-process
alternates with the blocks (median), for the ratio of the hardened cost to it.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.grading.namespace import run_cell  # noqa: E402
from autograder.course.view import read_course  # noqa: E402
from autograder.run.hardened import grade_submission, grading_server, intake_submission  # noqa: E402
from autograder.grading.rubric import RUBRIC  # noqa: E402
from autograder.sandbox.layers import detect  # noqa: E402
from autograder.sandbox.status import offered  # noqa: E402
from autograder.sandbox.forkclient import ForkServer  # noqa: E402
from autograder.samples.synthetic import reference_answers, write_submission  # noqa: E402


def one(folder: Path, server: ForkServer) -> tuple[float, float]:
    """(whole submission as the grader grades it, intake alone) in seconds."""
    t0 = time.perf_counter()
    intake_submission(folder, read_course(ROOT, "ch04_attention"))
    t1 = time.perf_counter()
    record = grade_submission(folder, course=ROOT, student_id="bench", server=server)
    t2 = time.perf_counter()
    assert record.total == record.max_total, [c.message for c in record.checks if not c.passed]
    return t2 - t1, t1 - t0


def in_process() -> float:
    ns: dict = {}
    for cells in reference_answers(ROOT / "source/ch04_attention").values():
        for code in cells.values():
            exec("import numpy as np\n" + code, ns)       # noqa: S102 - our own solutions
    t = time.perf_counter()
    for grade_id in RUBRIC:
        run_cell(ns, grade_id, "bench")
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=30, help="submissions per variant (a multiple of 10)")
    parser.add_argument("--smoke", action="store_true", help="one submission per variant: does the script run "
                        "(tests/house/test_benchmarks.py)")
    args = parser.parse_args()
    block = 1 if args.smoke else BLOCK
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_submission(ROOT / "release/ch04_attention", ROOT / "source/ch04_attention",
                                  Path(tmp) / "submitted" / "bench" / "ch04_attention")
        t = time.perf_counter()
        servers = {AHEAD: grading_server()}                # as `grade` starts it
        start = time.perf_counter() - t
        servers[OWN] = ForkServer()
        runs = {name: [] for name in servers}
        rubric = []
        try:
            for _ in range(1 if args.smoke else max(args.n // BLOCK, 1)):   # blocks side by side: the drift hits both
                for name, server in servers.items():
                    one(folder, server)                    # the block's first: the other variant ran just before
                    runs[name] += [one(folder, server) for _ in range(block)]
                rubric += [in_process() for _ in range(block)]      # and the rubric alone, in the same window
        finally:
            for server in servers.values():
                server.close()
    print("isolation layers:", ", ".join(offered(detect())))
    print(f"fork server start (once per grader process): {start * 1e3:.0f} ms")
    medians = {name: statistics.median(r[0] for r in rs) * 1e3 for name, rs in runs.items()}
    for name, rs in runs.items():
        print(f"per submission, {name}, median of {len(rs)}: {medians[name]:.1f} ms "
              f"(of which intake {statistics.median(r[1] for r in rs) * 1e3:.1f})")
    print(f"ratio (ahead / own): {medians[AHEAD] / medians[OWN]:.2f}")
    alone = statistics.median(rubric) * 1e3
    print(f"same rubric in-process (no sandbox), median of {len(rubric)} in the same blocks: {alone:.1f} ms")
    print(f"hardened / in-process: {medians[AHEAD] / alone:.1f}x")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (2 cores)")


AHEAD = "workers started ahead (as `grade` runs)"
OWN = "each notebook starting its own worker"
BLOCK = 10


if __name__ == "__main__":
    main()
