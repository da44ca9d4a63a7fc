"""Throughput of `autograder grade` against `nbgrader autograde` on the same class (a script, not a test).

    .venv/bin/python benchmarks/grading_throughput.py [--students 12]

Builds one class from the sample class (a mix of correct and buggy honest
submissions), copies the course three times, and in one run times:
`nbgrader autograde` (serial, as nbgrader runs), and `python -m autograder
grade` with 1 and with 2 workers (every available isolation layer on, all
outputs written: records, CSV, gradebook, feedback, results.json, report).
Prints the wall times, the ratios, the per-submission cost and the 1 -> 2
worker scaling, and checks that the totals agree.
"""
from __future__ import annotations

import argparse
import csv
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.samples import sample_class  # noqa: E402
from autograder.course.nbgrader_cli import run_nbgrader  # noqa: E402
from autograder.sandbox.layers import detect  # noqa: E402
from autograder.samples.synthetic import write_submission  # noqa: E402

# every honest student of the sample class (correct and buggy work; not the hostile or damaged ones), in
# its order: taken from the sample class so that the list cannot go stale when the fixtures change
HONEST = [s for s in sample_class.students() if not s.startswith(("hostile-", "damaged-"))]


def make_course(where: Path, students: list[str]) -> Path:
    course = where
    course.mkdir(parents=True)
    shutil.copy(ROOT / "nbgrader_config.py", course)
    for part in ("source", "release"):
        shutil.copytree(ROOT / part, course / part)
    variants = sample_class.students()
    for i, student in enumerate(students):
        name = f"{student}-{i:02d}"
        write_submission(course / "release/ch04_attention", course / "source/ch04_attention",
                         course / "submitted" / name / "ch04_attention", variants[student])
    return course


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def totals_from(path: Path, column: str) -> dict[str, float]:
    with open(path) as f:
        return {row["student_id"]: float(row[column]) for row in csv.DictReader(f)}


def run_size(n: int, tmp: Path) -> dict:
    students = [HONEST[i % len(HONEST)] for i in range(n)]
    nbg = make_course(tmp / f"nbgrader{n}", students)
    ours = {w: make_course(tmp / f"ours{n}-{w}", students) for w in (1, 2)}
    run_nbgrader(["generate_assignment", "ch04_attention", "--force", "--log-level=WARN"], nbg, "generate_assignment")
    autograde = ["autograde", "ch04_attention", "--force", "--log-level=WARN"]
    t = {"nbgrader": timed(lambda: run_nbgrader(autograde, nbg, "autograde"))}
    run_nbgrader(["export", "--log-level=WARN"], nbg, "export")
    for w, course in ours.items():
        cmd = [sys.executable, "-m", "autograder", "grade", "--course", str(course), "--workers", str(w)]
        t[w] = timed(lambda: subprocess.run(cmd, check=True, capture_output=True))
    t["agree"] = totals_from(nbg / "grades.csv", "score") == totals_from(ours[1] / "grading/grades.csv", "total")
    return t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, nargs="+", default=[12, 40])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = {n: run_size(n, Path(tmp)) for n in args.students}
    print("isolation layers on:", ", ".join(k for k, v in detect().items() if v.startswith("available")))
    print(f"{'class':>5} {'nbgrader s':>10} {'ours 1w s':>9} {'ours 2w s':>9} {'x (1w)':>7} {'x (2w)':>7} "
          f"{'1->2w':>6} {'agree':>5}")
    for n, t in results.items():
        print(f"{n:>5} {t['nbgrader']:>10.1f} {t[1]:>9.2f} {t[2]:>9.2f} {t['nbgrader'] / t[1]:>7.1f} "
              f"{t['nbgrader'] / t[2]:>7.1f} {t[1] / t[2]:>6.2f} {str(t['agree']):>5}")
    sizes = sorted(results)
    if len(sizes) > 1:
        a, b = sizes[0], sizes[-1]
        for w in (1, 2):
            marginal = (results[b][w] - results[a][w]) / (b - a)
            nbg = (results[b]["nbgrader"] - results[a]["nbgrader"]) / (b - a)
            print(f"per extra submission, {w} worker(s): ours {marginal * 1e3:.0f} ms, nbgrader {nbg:.2f} s "
                  f"-> {nbg / marginal:.0f}x")
    print("(ours: `python -m autograder grade` end to end, every output written; "
          "nbgrader: `nbgrader autograde`, serial)")


if __name__ == "__main__":
    main()
