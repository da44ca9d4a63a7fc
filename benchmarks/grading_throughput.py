"""Throughput of `autograder grade` against `nbgrader autograde` on the same class (a script, not a test).

    .venv/bin/python benchmarks/grading_throughput.py [--students 12 40] [--repeat 3] [--baseline DIR]
    .venv/bin/python benchmarks/grading_throughput.py --students 12 40 --no-nbgrader --baseline DIR
    .venv/bin/python benchmarks/grading_throughput.py --smoke

Builds one class from the sample class (a mix of correct and buggy honest
submissions) and in one run times: `nbgrader autograde` (serial, as nbgrader
runs, nbgrader's own Execute: the course config's block that routes it through our sandbox is
removed for this copy; once per class size), and `python -m autograder grade` with 1 and with 2
workers (every available isolation layer on, all outputs written: records,
CSV, gradebook, feedback, results.json, report; a class of at most 30 gets 1
worker by default), each ``--repeat`` times in alternation on a fresh copy of
the course, medians reported. With ``--baseline DIR`` the same runs of another
checkout's grader (its own .venv) alternate with ours (before against after).
Also times the same rubric in-process on each submission's functions (no
sandbox, no outputs), for the ratio of one more submission to it. Prints the
wall times, the ratios, the per-submission cost and the 1 -> 2 worker scaling,
and checks that the totals agree. Both checkouts' packages are compiled to bytecode first, as an
install leaves them (``bytecode``).
"""
from __future__ import annotations

import argparse
import csv
import os
import shutil
import statistics
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
from autograder.sandbox.status import offered  # noqa: E402
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


def run_size(n: int, tmp: Path, repeat: int, baseline: Path | None, nbgrader: bool) -> dict:
    students = [HONEST[i % len(HONEST)] for i in range(n)]
    template = make_course(tmp / f"class{n}", students)
    t = {}
    if nbgrader:
        nbg = tmp / f"nbgrader{n}"
        shutil.copytree(template, nbg)
        plain_nbgrader(nbg / "nbgrader_config.py")
        run_nbgrader(["generate_assignment", "ch04_attention", "--force", "--log-level=WARN"], nbg,
                     "generate_assignment")
        autograde = ["autograde", "ch04_attention", "--force", "--log-level=WARN"]
        t["nbgrader"] = timed(lambda: run_nbgrader(autograde, nbg, "autograde"))
        run_nbgrader(["export", "--log-level=WARN"], nbg, "export")
    pythons = {"": Path(sys.executable), **({"baseline ": baseline / ".venv/bin/python"} if baseline else {})}
    runs: dict = {}
    for i in range(repeat):                      # alternating: the machine's drift hits every variant
        for label, python in pythons.items():
            for w in (1, 2):
                course = tmp / f"run{n}-{i}-{w}-{len(label)}"
                shutil.copytree(template, course)
                cmd = [str(python), "-m", "autograder", "grade", "--course", str(course), "--workers", str(w)]
                cwd = baseline if label else ROOT
                runs.setdefault(f"{label}{w}", []).append(
                    timed(lambda: subprocess.run(cmd, check=True, capture_output=True, cwd=cwd)))
                if nbgrader and not label and i == 0 and w == 1:
                    t["agree"] = totals_from(nbg / "grades.csv", "score") == totals_from(
                        course / "grading/grades.csv", "total")
                shutil.rmtree(course)
    t.update({key: statistics.median(v) for key, v in runs.items()})
    t["in-process"] = statistics.median(in_process_rubric(template) for _ in range(repeat))
    return t


DOORS = ("# --- the hardened grader's doors", "# --- end of the hardened grader's doors ---")


def plain_nbgrader(config: Path) -> None:
    """The course's config without the block that makes `nbgrader autograde` grade through our sandbox:
    the comparison is with nbgrader's own Execute (each notebook run in a kernel, the hidden tests in it)."""
    text = config.read_text()
    start, end = text.index(DOORS[0]), text.index(DOORS[1]) + len(DOORS[1])
    config.write_text(text[:start] + text[end:])


def in_process_rubric(course: Path) -> float:
    """Seconds per submission for the same rubric run in-process on each submission's own functions
    (its code cells executed in a plain namespace per notebook; no sandbox, no intake, no outputs)."""
    from autograder.assignment import NOTEBOOKS
    from autograder.grading.namespace import quiet, run_cell
    from autograder.course.view import read_course
    from autograder.intake import intake_submission
    folders = sorted((course / "submitted").iterdir())
    spent = 0.0
    for folder in folders:
        intake = intake_submission(folder / "ch04_attention", read_course(course, "ch04_attention"), folder.name)
        spaces = {nb: {} for nb in NOTEBOOKS}
        for cell in intake.cells:
            try:
                exec(cell.source, spaces[cell.notebook])      # noqa: S102 - the sample class's honest work
            except Exception:  # noqa: BLE001 - a student's cell that raises, as in the notebook
                pass
        t = time.perf_counter()
        with quiet():
            for notebook, grade_ids in NOTEBOOKS.items():
                for grade_id in grade_ids:
                    run_cell(spaces[notebook], grade_id, folder.name)
        spent += time.perf_counter() - t
    return spent / len(folders)


def bytecode(checkout: Path) -> None:
    """Compile a checkout's packages to bytecode first, as installing them does (pip compiles a wheel;
    an editable checkout writes it on first import): a shell with PYTHONDONTWRITEBYTECODE set would
    otherwise have every grading process, fork server and gradebook writer compile this project's
    modules on each run (about 60 ms of CPU in the grader alone), which nbgrader's installed modules
    never do."""
    for package in ("autograder", "solutions"):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(checkout / package)], check=True,
                       capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, nargs="+", default=[12, 40])
    parser.add_argument("--repeat", type=int, default=1, help="runs of each grader variant, alternating")
    parser.add_argument("--baseline", type=Path, help="another checkout (with its .venv) to compare against")
    parser.add_argument("--no-nbgrader", action="store_true", help="skip nbgrader autograde")
    parser.add_argument("--smoke", action="store_true", help="a class of 1, without nbgrader: does the script run "
                        "(tests/house/test_benchmarks.py)")
    args = parser.parse_args()
    if args.smoke:
        args.students, args.repeat, args.no_nbgrader = [1], 1, True
    nbgrader = not args.no_nbgrader
    for checkout in (ROOT, *([args.baseline] if args.baseline else [])):
        bytecode(checkout)
    with tempfile.TemporaryDirectory() as tmp:
        results = {n: run_size(n, Path(tmp), args.repeat, args.baseline, nbgrader) for n in args.students}
    print("isolation layers on:", ", ".join(offered(detect())))
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (2 cores); medians of {args.repeat}")
    variants = [k for k in results[args.students[0]] if k not in ("nbgrader", "agree", "in-process")]
    for n, t in results.items():
        line = f"class {n}: " + ", ".join(f"ours {k}w {t[k]:.2f} s" for k in variants)
        if nbgrader:
            line += f"; nbgrader {t['nbgrader']:.1f} s; " + ", ".join(
                f"{k}w {t['nbgrader'] / t[k]:.1f}x" for k in variants) + f"; totals agree: {t['agree']}"
        print(line)
    sizes = sorted(results)
    if len(sizes) > 1:
        a, b = sizes[0], sizes[-1]
        for k in variants:
            marginal = (results[b][k] - results[a][k]) / (b - a)
            line = f"per extra submission, {k} worker(s): {marginal * 1e3:.0f} ms"
            if nbgrader:
                nbg = (results[b]["nbgrader"] - results[a]["nbgrader"]) / (b - a)
                line += f", nbgrader {nbg:.2f} s -> {nbg / marginal:.0f}x"
            rubric = statistics.median(results[n]["in-process"] for n in sizes)
            line += f"; the same rubric in-process {rubric * 1e3:.1f} ms -> {marginal / rubric:.1f}x it"
            print(line)
    print("(ours: `python -m autograder grade` end to end, every output written; "
          "nbgrader: `nbgrader autograde`, serial)")


if __name__ == "__main__":
    main()
