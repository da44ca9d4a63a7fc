"""What one notebook costs in the hardened grader, layer by layer (a script, not a test).

    .venv/bin/python benchmarks/sandbox_layers.py [--n 40] [--smoke]

Starts workers from a warm fork server exactly as ``grade`` does (every isolation layer this
machine has), one notebook at a time, the four notebooks of the reference solution in turn, and
times each step of a worker's life in one run: the spawn request, the fork into a new PID
namespace, the cgroup, each namespace, the private tmpfs, hiding this package, Landlock, the uid
drop, seccomp (timestamps taken inside the worker as each layer is done, on the clock every
process shares), the first reply, the first cell and the others, one bare RPC round trip, the
rubric's checks through the worker (and how many round trips they take), collecting the output,
the kill and the clean-up. Beside them: the same checks run in-process on the same functions,
and a bare fork (+ exit + wait) of a process the fork server's size. Prints the median of each
step and its share of the notebook's total.

Then CPU time, not wall time (``/proc/PID/schedstat``: what each process ran, whichever core): the
fork server's per worker (the fork), a worker that only starts under every layer and answers its
first request (the floor rule 1 sets: one such worker per notebook), a worker that grades its
notebook, and the grader's own thread for the rubric through the worker, beside the in-process
rubric; and the whole machine's CPU (/proc/stat) for such empty workers, their tear-down and the kernel's
deferred work included: the floor of one more submission (four notebooks) against the in-process rubric.
Run it on an otherwise idle machine.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.assignment import FUNCTIONS, NOTEBOOKS  # noqa: E402
from autograder.grading import references  # noqa: E402
from autograder.grading.namespace import quiet, run_cell  # noqa: E402
from autograder.course.view import read_course  # noqa: E402
from autograder.run.hardened import intake_submission  # noqa: E402
from autograder.run.sandboxed_student import SandboxedStudent  # noqa: E402
from autograder.sandbox.forkclient import ForkServer  # noqa: E402
from autograder.sandbox.handle import WorkerHandle  # noqa: E402
from autograder.sandbox.layers import detect  # noqa: E402
from autograder.sandbox.status import offered  # noqa: E402
from autograder.sandbox.limits import Limits  # noqa: E402
from autograder.samples.synthetic import write_submission  # noqa: E402

BARE_FORK = """
import os, statistics, time
from autograder.sandbox.worker import make_shell, warm_imports, warm_shell
warm_imports(); shell = make_shell(); warm_shell(shell)
times = []
for _ in range({n}):
    t = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    times.append(time.perf_counter() - t)
print(statistics.median(times))
"""


def bare_fork(n: int) -> float:
    """fork + _exit + waitpid of a process that imported what the fork server imports."""
    out = subprocess.run([sys.executable, "-c", BARE_FORK.format(n=n)], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return float(out.stdout)


class Counted:
    """Counts the round trips a worker handle makes."""

    def __init__(self, handle: WorkerHandle):
        self.handle, self.trips = handle, 0
        self.real = handle.request
        handle.request = self.request

    def request(self, *args, **kwargs):
        self.trips += 1
        return self.real(*args, **kwargs)


def one_notebook(server: ForkServer, cells, notebook: str, limits: Limits, seed: int) -> dict[str, float]:
    """Step -> seconds for one worker grading one notebook (the reference solution)."""
    names = list(FUNCTIONS[notebook])
    steps = {}
    t0 = time.perf_counter()
    handle = WorkerHandle(server, limits, timings=True)
    ready = time.perf_counter()
    marks = json.loads(handle.status.pop("timings"))
    previous = t0
    for name, at in marks:
        steps[name if name != "spawn asked" else "spawn request reaches the fork server"] = at - previous
        previous = at
    steps["worker ready, first reply (hello round trip)"] = ready - previous
    t = time.perf_counter()
    handle.run_cell(cells[0].source, 10.0, names)
    steps["first cell"] = time.perf_counter() - t
    t = time.perf_counter()
    for cell in cells[1:]:
        defined = handle.run_cell(cell.source, 10.0, names).get("defined", [])
    steps["the other cells (2-4 per notebook)"] = time.perf_counter() - t
    t = time.perf_counter()
    handle.request({"op": "functions", "names": names}, 10.0)
    steps["one RPC round trip (no work)"] = time.perf_counter() - t
    student = SandboxedStudent(server, cells, names, limits, notebook=notebook, start=False)
    student.worker, student.ran, student.upto, student.defined = handle, len(cells), len(cells), set(defined)
    counted = Counted(handle)
    t, cpu = time.perf_counter(), time.thread_time()
    with quiet():
        for grade_id in NOTEBOOKS[notebook]:
            run_cell(student, grade_id, seed=seed)
    steps["rubric through the worker"] = time.perf_counter() - t
    steps["cpu: the grader's, for the rubric through the worker"] = time.thread_time() - cpu
    steps["round trips of the rubric (count)"] = counted.trips
    t = time.perf_counter()
    handle.request({"op": "output"}, 5.0)
    steps["collect output (round trip)"] = time.perf_counter() - t
    steps["cpu: the worker's own (its whole life)"] = cpu_seconds(handle.pid)
    t = time.perf_counter()
    handle.kill_now()
    steps["kill (on the grading path)"] = time.perf_counter() - t
    t = time.perf_counter()
    handle.cleanup()
    steps["clean-up: cgroup emptied and removed, folder (behind, in the pool)"] = time.perf_counter() - t
    return steps


def cpu_seconds(pid: int) -> float:
    """CPU time process ``pid`` has run so far (Linux; nan elsewhere)."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return float("nan")


def machine_busy() -> float:
    """Seconds of CPU the whole machine has been busy, every core and process, the kernel's own
    threads included (/proc/stat; nan elsewhere)."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return float("nan")
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def empty_worker(server: ForkServer, limits: Limits) -> float:
    """CPU of a worker that starts under every layer, answers its first request and is ended."""
    handle = WorkerHandle(server, limits)
    cpu = cpu_seconds(handle.pid)
    handle.cleanup()
    return cpu


FUNCTION_NAMES = {n for names in FUNCTIONS.values() for n in names}
IN_STUDENT = {"cpu": 0.0, "calls": 0}           # CPU inside the (reference) student's functions, in-process


def timed(fn):
    """``fn`` with the CPU spent inside it (and its calls) counted in IN_STUDENT (an inner call counts once)."""
    def student_function(*args, **kwargs):
        t, outer = time.thread_time(), IN_STUDENT.get("depth", 0) == 0
        IN_STUDENT["depth"] = IN_STUDENT.get("depth", 0) + 1
        try:
            return fn(*args, **kwargs)
        finally:
            IN_STUDENT["depth"] -= 1
            if outer:
                IN_STUDENT["cpu"] += time.thread_time() - t
                IN_STUDENT["calls"] += 1
    return student_function


def in_process(namespaces: dict, notebook: str, seed: int) -> tuple:
    """(wall, CPU, CPU inside the student's functions, their calls, references asked, computed) of the notebook's
    checks run in-process on the reference functions; the rest of the CPU is the grader's own."""
    IN_STUDENT.update(cpu=0.0, calls=0)
    asked, computed = references.STATS["asked"], references.STATS["computed"]
    t, cpu = time.perf_counter(), time.thread_time()
    with quiet():
        for grade_id in NOTEBOOKS[notebook]:
            run_cell(namespaces[notebook], grade_id, seed=seed)
    return (time.perf_counter() - t, time.thread_time() - cpu, IN_STUDENT["cpu"], IN_STUDENT["calls"],
            references.STATS["asked"] - asked, references.STATS["computed"] - computed)


def reference_namespaces(intake) -> dict:
    """notebook -> the namespace its cells define (the instructor's own solutions), each exercise function
    ``timed``. A line magic (``%matplotlib inline``, the first cell's first line) is dropped, as the worker makes
    it a no-op: exec'd as it is, the cell is a SyntaxError and ``import numpy as np`` never runs."""
    spaces = {}
    for notebook in NOTEBOOKS:
        ns: dict = {}
        for cell in (c for c in intake.cells if c.notebook == notebook):
            source = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith("%"))
            try:
                exec(source, ns)        # noqa: S102 - the instructor's own solutions
            except Exception:  # noqa: BLE001 - a plotting or demo cell
                pass
        spaces[notebook] = {k: timed(v) if callable(v) and k in FUNCTION_NAMES else v for k, v in ns.items()}
    return spaces


def full_marks(spaces: dict, seed: int) -> None:
    """Stops the script unless the in-process rubric gives the reference namespaces every point: timing a
    rubric that fails (a function raising NameError on every call) measures the wrong work."""
    with quiet():
        lost = [f"{r.grade_id}.{r.check}: {r.message[:120]}" for nb in NOTEBOOKS for g in NOTEBOOKS[nb]
                for r in run_cell(spaces[nb], g, seed=seed) if r.points < r.max_points]
    if lost:
        raise SystemExit(f"the reference solution does not get full marks in-process ({len(lost)} checks), so the "
                         f"in-process figures would mean nothing; first: {lost[0]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=40, help="workers timed (the four notebooks in turn)")
    parser.add_argument("--smoke", action="store_true", help="four workers: does the script run "
                        "(tests/house/test_benchmarks.py)")
    args = parser.parse_args()
    if args.smoke:
        args.n = 4
    limits, seed = Limits(), 1234
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_submission(ROOT / "release/ch04_attention", ROOT / "source/ch04_attention",
                                  Path(tmp) / "submitted" / "bench" / "ch04_attention")
        intake = intake_submission(folder, read_course(ROOT, "ch04_attention"), "bench")
    cells = {nb: [c for c in intake.cells if c.notebook == nb] for nb in NOTEBOOKS}
    spaces = reference_namespaces(intake)
    full_marks(spaces, seed)
    server = ForkServer()
    samples, inproc, empty = [], [], []
    try:
        for i in range(args.n + len(NOTEBOOKS)):
            notebook = list(NOTEBOOKS)[i % len(NOTEBOOKS)]
            steps = one_notebook(server, cells[notebook], notebook, limits, seed)
            rubric = in_process(spaces, notebook, seed)
            if i >= len(NOTEBOOKS):                     # the first round warms up
                samples.append(steps)
                inproc.append(rubric)
        before, spawns, machine = cpu_seconds(server.proc.pid), args.n, machine_busy()
        empty = [empty_worker(server, limits) for _ in range(spawns)]
        forking = (cpu_seconds(server.proc.pid) - before) / spawns
        time.sleep(1.0)                                   # the kernel's deferred clean-up of the last ones
        machine = (machine_busy() - machine) / spawns
    finally:
        server.close()
    fork = bare_fork(200)
    report(samples, inproc, fork)
    report_cpu(samples, inproc, empty, forking, machine)


def report(samples: list[dict], inproc: list[float], fork: float) -> None:
    print("isolation layers:", ", ".join(offered(detect())))
    print(f"load average during the run: {os.getloadavg()[0]:.1f} (2 cores)")
    names = [k for k in samples[0] if k != "round trips of the rubric (count)" and not k.startswith("cpu: ")]
    medians = {k: statistics.median(s[k] for s in samples) * 1e3 for k in names}
    total = sum(medians.values())
    print(f"\none notebook's worker, median of {len(samples)} (the four notebooks in turn):\n")
    print("| step | median ms | share |\n| --- | --- | --- |")
    for name in names:
        print(f"| {name} | {medians[name]:.2f} | {medians[name] / total:.1%} |")
    print(f"| **total for one notebook** | **{total:.2f}** | 100% |")
    trips = statistics.median(s["round trips of the rubric (count)"] for s in samples)
    rubric_in = statistics.median(r[0] for r in inproc) * 1e3
    print(f"\nrubric round trips per notebook (median): {trips:g}")
    print(f"same checks in-process (no sandbox), per notebook: {rubric_in:.2f} ms")
    print(f"bare fork + exit + wait of a process the fork server's size: {fork * 1e3:.2f} ms")
    print(f"total / in-process rubric: {total / rubric_in:.1f}x; total / bare fork: {total / (fork * 1e3):.1f}x")


def report_cpu(samples: list[dict], inproc: list, empty: list[float], forking: float, machine: float) -> None:
    """CPU per notebook, and the floor of one more submission against the in-process rubric."""
    ms = lambda values: statistics.median(values) * 1e3                        # noqa: E731
    rows = {"the fork server, per worker it forks": forking * 1e3,
            "a worker that only starts under every layer and answers": ms(empty),
            "a worker that grades its notebook (cells, the rubric's calls)": ms(
                s["cpu: the worker's own (its whole life)"] for s in samples),
            "the grader, for the rubric through the worker": ms(
                s["cpu: the grader's, for the rubric through the worker"] for s in samples),
            "the same checks in-process": ms(r[1] for r in inproc),
            "  of which inside the student's functions (here the reference's)": ms(r[2] for r in inproc),
            "  of which the grader's own (plans, references, comparisons, diagnosis)": ms(r[1] - r[2] for r in inproc)}
    print("\nCPU per notebook, median ms (schedstat; the kernel's work for namespaces and cgroups on other "
          "threads is not counted):\n\n| process | CPU ms |\n| --- | --- |")
    for name, value in rows.items():
        print(f"| {name} | {value:.2f} |")
    med = lambda k: statistics.median(r[k] for r in inproc)                     # noqa: E731
    print(f"\nin-process, per notebook (median): {med(3):g} calls of the student's functions; the grader's "
          f"references asked {med(4):g} times, computed {med(5):g} (grading/references.py)")
    rubric = 4 * rows["the same checks in-process"]
    print(f"\na worker that only starts and answers, then is ended, costs the whole machine {machine * 1e3:.2f} ms of "
          "CPU (every process and the kernel's own threads: the fork, the pages copied on first write, "
          "namespaces, mounts and cgroups made and torn down; measured while nothing else ran)")
    floor = 4 * machine * 1e3
    print(f"floor of one more submission under rule 1 (four such workers, nothing run in them): {floor:.1f} ms of "
          f"CPU, {floor / rubric:.1f}x the in-process rubric's {rubric:.1f} ms (on 2 cores at best half that in wall "
          f"time: {floor / rubric / 2:.1f}x)")


if __name__ == "__main__":
    main()
