"""A large class end to end: time, peak memory and cost per submission against class size (a script,
not a test).

    .venv/bin/python benchmarks/grading_scale.py [--sizes 100 1000] [--dask | --dask-only] [--smoke]

Lays out classes of synthetic submissions cycling through the sample class (``samples/sample_class``:
the instructor's answers, every fixture's correct and buggy work, hostile code and damaged notebooks;
``--hostile-every`` sets how often a hostile or damaged one comes, default one in 25), each student's
files distinct in their bytes as real saves are. Each class is graded by `python -m autograder grade`
with its default workers (every isolation layer, every output written: records, CSV, the nbgrader
gradebook, feedback pages, results.json, the report), and with ``--dask`` the largest class again
on a local Dask cluster of two worker processes (`grade --scheduler`). Prints, per run: the wall
time, when the last record was written (the rest is the outputs), the cost per submission, the peak
resident memory of the grading process (and of the largest pool worker or gradebook writer), and
the growth of the cost per submission from the smallest class to the largest.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.samples import sample_class  # noqa: E402
from autograder.samples.synthetic import write_submission  # noqa: E402

ASSIGNMENT = "ch04_attention"
MARK = "@@student@@"
# the grading process itself reports its peak memory (ru_maxrss, KiB on Linux) and its children's, at
# exit: the CLI ends through lifecycle.exit_now, which runs the atexit handlers (this one last, after the
# fork server's, so its children are counted) and then leaves without returning here
RUN = ("import atexit, resource, runpy, sys\n"
       "sys.argv = ['autograder', *sys.argv[1:]]\n"
       "atexit.register(lambda: print('PEAK', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,\n"
       "              resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr, flush=True))\n"
       "runpy.run_module('autograder', run_name='__main__')\n")


def templates(where: Path) -> dict[str, dict[str, str]]:
    """student kind -> notebook file -> its text, with MARK where the student's name goes."""
    out = {}
    release, source = ROOT / "release" / ASSIGNMENT, ROOT / "source" / ASSIGNMENT
    for kind, overrides in sample_class.students().items():
        folder = write_submission(release, source, where / kind / MARK / ASSIGNMENT, overrides)
        if kind in sample_class.DAMAGED:
            sample_class.DAMAGED[kind](folder)
        out[kind] = {p.name: p.read_text() for p in sorted(folder.iterdir())}
    return out


def order(kinds: list[str], hostile_every: int) -> list[str]:
    """Honest kinds in turn, one hostile or damaged kind every ``hostile_every`` students."""
    honest = [k for k in kinds if not k.startswith(("hostile-", "damaged-"))]
    other = [k for k in kinds if k.startswith(("hostile-", "damaged-"))]
    i = j = 0
    while True:
        if hostile_every and (i + j + 1) % hostile_every == 0:
            yield other[j % len(other)]
            j += 1
        else:
            yield honest[i % len(honest)]
            i += 1


def make_course(where: Path, size: int, texts: dict, hostile_every: int) -> Path:
    course = where / f"class-{size}"
    course.mkdir(parents=True)
    shutil.copy(ROOT / "nbgrader_config.py", course)
    for part in ("source", "release"):
        shutil.copytree(ROOT / part, course / part)
    kinds = order(sorted(texts), hostile_every)
    for i in range(size):
        kind = next(kinds)
        student = f"s{i:04d}-{kind}"
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        for name, text in texts[kind].items():
            (folder / name).write_text(text.replace(MARK, student))
    return course


class LastRecord:
    """When the last record of the run appeared (polled every 0.2 s)."""

    def __init__(self, records: Path, expected: int):
        self.records, self.expected, self.at = records, expected, None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self):
        while not self.stop.wait(0.2):
            try:
                n = sum(1 for name in os.listdir(self.records) if name.endswith(".json"))
            except OSError:
                continue
            if n >= self.expected and self.at is None:
                self.at = time.perf_counter()


def grade(course: Path, size: int, extra: list[str]) -> dict:
    watcher = LastRecord(course / "grading" / "records", size)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", RUN, "grade", "--course", str(course), *extra],
                          capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t
    watcher.stop.set()
    if proc.returncode != 0:
        raise SystemExit(f"grade failed ({proc.returncode}): {proc.stderr[-2000:]}")
    peaks = [line.split() for line in proc.stderr.splitlines() if line.startswith("PEAK")]
    if not peaks:
        raise SystemExit(f"grade printed no peak memory (the PEAK line of RUN): {proc.stderr[-2000:]}")
    peak = peaks[-1]
    graded = sum(1 for _ in (course / "grading" / "records").glob("*.json"))
    rows = (course / "grading" / "grades.csv").read_text().count("\n") - 1
    return {"wall": wall, "records": (watcher.at - t) if watcher.at else float("nan"), "graded": graded,
            "rows": rows, "peak_mib": int(peak[1]) / 1024, "child_peak_mib": int(peak[2]) / 1024}


def dask_cluster():
    from distributed import LocalCluster
    return LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--hostile-every", type=int, default=25)
    parser.add_argument("--dask", action="store_true", help="the largest class again on a local Dask cluster")
    parser.add_argument("--dask-only", action="store_true", help="only the largest class, only on Dask")
    parser.add_argument("--smoke", action="store_true", help="one class of 2, to check the script runs")
    args = parser.parse_args()
    if args.smoke:
        args.sizes = [2]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        texts = templates(Path(tmp) / "templates")
        for size in [max(args.sizes)] if args.dask_only else sorted(args.sizes):
            course = make_course(Path(tmp), size, texts, args.hostile_every)
            if not args.dask_only:
                results.append((f"local, {size}", size, grade(course, size, [])))
            if (args.dask or args.dask_only) and size == max(args.sizes):
                shutil.rmtree(course / "grading", ignore_errors=True)
                (course / "gradebook.db").unlink(missing_ok=True)
                with dask_cluster() as cluster:
                    run = grade(course, size, ["--scheduler", cluster.scheduler_address])
                    from distributed import Client
                    with Client(cluster) as client:
                        run["dask_worker_peak_mib"] = max(client.run(_peak_mib).values())
                results.append((f"dask (2 worker processes), {size}", size, run))
            shutil.rmtree(course)
    report(results)


def _peak_mib() -> float:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def report(results) -> None:
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (2 cores)")
    print("| run | submissions | wall s | last record at s | ms per submission | grader peak MiB "
          "| largest child peak MiB | graded / CSV rows |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, size, r in results:
        extra = f" (Dask worker {r['dask_worker_peak_mib']:.0f})" if "dask_worker_peak_mib" in r else ""
        print(f"| {name} | {size} | {r['wall']:.1f} | {r['records']:.1f} | {r['wall'] / size * 1e3:.0f} | "
              f"{r['peak_mib']:.0f} | {r['child_peak_mib']:.0f}{extra} | {r['graded']} / {r['rows']} |")
    local = [(size, r) for name, size, r in results if name.startswith("local")]
    if len(local) > 1:
        (a, ra), (b, rb) = local[0], local[-1]
        print(f"cost per submission, {a} -> {b} submissions: {ra['wall'] / a * 1e3:.0f} -> "
              f"{rb['wall'] / b * 1e3:.0f} ms (ratio {(rb['wall'] / b) / (ra['wall'] / a):.2f}); "
              f"per extra submission {(rb['wall'] - ra['wall']) / (b - a) * 1e3:.0f} ms")
    print(json.dumps([(name, r) for name, _, r in results]))


if __name__ == "__main__":
    main()
