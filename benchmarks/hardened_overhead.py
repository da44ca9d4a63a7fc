"""Per-submission overhead of the hardened path (a script, not a test).

    .venv/bin/python benchmarks/hardened_overhead.py [--n 30]

Grades the reference solution (all four notebooks) N times through a warm
fork server with every available isolation layer, and prints the median wall
time per submission, split into intake, worker start + cells, and rubric
calls. The reference functions compute in microseconds, so the times are the
grader's own overhead. Also prints the same rubric run in-process for scale.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.grading import run_cell  # noqa: E402
from autograder.hardened import intake_submission  # noqa: E402
from autograder.rubric import FUNCTIONS, RUBRIC  # noqa: E402
from autograder.sandbox.layers import detect  # noqa: E402
from autograder.sandbox.limits import Limits  # noqa: E402
from autograder.sandbox.session import ForkServer  # noqa: E402
from autograder.sandboxed_student import SandboxedStudent  # noqa: E402
from autograder.submissions import reference_answers, write_submission  # noqa: E402


def one(folder: Path, server: ForkServer) -> tuple[float, float, float]:
    t0 = time.perf_counter()
    intake = intake_submission(folder, ROOT)
    t1 = time.perf_counter()
    names = sorted({f for fs in FUNCTIONS.values() for f in fs})
    student = SandboxedStudent(server, intake.cells, names, Limits())
    t2 = time.perf_counter()
    for grade_id in RUBRIC:
        run_cell(student, grade_id, "bench")
    student.close()
    t3 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2


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
    parser.add_argument("--n", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_submission(ROOT / "release/ch04_attention", ROOT / "source/ch04_attention",
                                  Path(tmp) / "submitted" / "bench" / "ch04_attention")
        t = time.perf_counter()
        server = ForkServer()
        start = time.perf_counter() - t
        try:
            one(folder, server)                                # warm-up
            runs = [one(folder, server) for _ in range(args.n)]
        finally:
            server.close()
    totals = [sum(r) for r in runs]
    print("isolation layers:", ", ".join(k for k, v in detect().items() if v.startswith("available")))
    print(f"fork server start (once per grader process): {start * 1e3:.0f} ms")
    print(f"per submission, median of {args.n}: {statistics.median(totals) * 1e3:.1f} ms "
          f"(intake {statistics.median(r[0] for r in runs) * 1e3:.1f}, "
          f"worker + cells {statistics.median(r[1] for r in runs) * 1e3:.1f}, "
          f"rubric calls {statistics.median(r[2] for r in runs) * 1e3:.1f})")
    print(f"same rubric in-process (no sandbox): {in_process() * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
