"""A class graded into SQLite and into PostgreSQL, side by side, while a teaching assistant saves manual
scores the whole time (a script, not a test).

    .venv/bin/python benchmarks/gradebook_concurrency.py [--students 300] [--gap 0.05] [--smoke]

For each database: a class of synthetic submissions (the sample class's students, cycled, each with
its own name) whose gradebook already holds an earlier run's rows (all 0, so every student's write changes
rows and counts), graded by `python -m autograder
grade` while ``tests/helpers/gradebook_editor.py`` saves manual scores with formgrader's own calls, one every
``--gap`` seconds, until the run has written all records but one. PostgreSQL is the distribution's
server, started in a temporary folder on a Unix socket (as the tests start it). Prints, per database:
the run's wall time, the gradebook transactions that wrote (PostgreSQL: transaction ids the server
handed out; SQLite: the file's change counter; the assistant's saves taken off), the saves made, the longest a
save waited, and whether every save is in the gradebook afterwards, unflagged, and counted in grades.csv.
"""
from __future__ import annotations

import argparse
import csv
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "helpers")]

from autograder.samples import sample_class  # noqa: E402
from autograder.samples.synthetic import write_submission  # noqa: E402
from gradebook_helpers import FULL, fill_gradebook  # noqa: E402
from pg_server import PgServer  # noqa: E402

ASSIGNMENT = "ch04_attention"


def lay_out(where: Path, size: int) -> tuple[Path, list[str]]:
    course = where / "course"
    course.mkdir(parents=True)
    shutil.copy(ROOT / "nbgrader_config.py", course)
    for part in ("source", "release"):
        shutil.copytree(ROOT / part, course / part)
    kinds = [k for k in sample_class.students() if k not in sample_class.DAMAGED and "hostile" not in k]
    students = []
    for i, kind in zip(range(size), itertools.cycle(kinds)):
        student = f"s{i:04d}-{kind}"[:60]
        write_submission(course / "release" / ASSIGNMENT, course / "source" / ASSIGNMENT,
                         course / "submitted" / student / ASSIGNMENT, sample_class.students()[kind])
        students.append(student)
    return course, students


def use_database(course: Path, url: str) -> None:
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text().replace('"sqlite:///gradebook.db"', f'"{url}"'))


def sqlite_commits(path: Path) -> int:
    """SQLite's file change counter: one more for each transaction that wrote (rollback-journal mode)."""
    with open(path, "rb") as f:
        return int.from_bytes(f.read(28)[24:28], "big")


def run_one(name: str, course: Path, students: list[str], url: str, commits, gap: float) -> dict:
    fill_gradebook(url, course, {s: {g: 0.0 for g in FULL} for s in students})   # an earlier run's rows, all 0
    editor = subprocess.Popen([sys.executable, str(ROOT / "tests" / "helpers" / "gradebook_editor.py"), url,
                               str(course / "grading" / "records"), str(len(students)), str(gap), *students[::7]],
                              stdout=subprocess.PIPE, text=True)
    editor.stdout.readline()                                   # ready: nbgrader loaded
    before = commits()
    started = time.monotonic()
    run = subprocess.Popen([sys.executable, "-m", "autograder", "grade", "--course", str(course)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    said = editor.communicate()[0]
    err = run.communicate()[1]
    wall = time.monotonic() - started
    edits = [json.loads(line) for line in said.splitlines()]
    saves = [e for e in edits if "error" not in e]
    last = {(e["student"], e["grade_id"]): e["score"] for e in saves}
    kept = kept_everywhere(url, course, last)
    return {"database": name, "exit": run.returncode, "wall_s": wall, "transactions": commits() - before - len(saves),
            "saves": len(saves), "save_errors": len(edits) - len(saves), "longest_wait_s": max(
                (e["waited"] for e in saves), default=0.0), "all_kept": kept, "stderr": err.strip()[-300:]}


def kept_everywhere(url: str, course: Path, last: dict) -> bool:
    """Every last save in the gradebook unflagged, and in grades.csv's total."""
    from autograder.gradebook.nbgrader_api import nbgrader_api
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        held = {(s.student.id, g.name): (g.manual_score, g.needs_manual_grade)
                for s in gb.find_assignment(ASSIGNMENT).submissions for nb in s.notebooks for g in nb.grades
                if g.manual_score is not None}
    with open(course / "grading" / "grades.csv") as f:
        totals = {r["student_id"]: float(r["total"]) for r in csv.DictReader(f)}
    for student in {s for s, _ in last}:
        record = json.loads((course / "grading" / "records" / f"{student}.json").read_text())
        expected = sum(last.get((student, g), c["earned"]) for g, c in record["cells"].items())
        if abs(totals[student] - expected) > 1e-9:
            return False
    return held == {key: (score, False) for key, score in last.items()}


def main() -> int:
    warnings.filterwarnings("ignore", message=".*not in session")        # nbgrader's own add_submission
    parser = argparse.ArgumentParser()
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--gap", type=float, default=0.05, help="seconds between the assistant's saves")
    parser.add_argument("--smoke", action="store_true", help="a class of 3: does the script run "
                        "(tests/env/postgres/test_gradebook_concurrency_benchmark.py); its figures mean nothing")
    args = parser.parse_args()
    if args.smoke:
        args.students = 3
    why = PgServer.unavailable()
    if why:
        print(f"PostgreSQL: {why}", file=sys.stderr)
        return 1
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        course, students = lay_out(Path(tmp) / "sqlite", args.students)
        db = course / "gradebook.db"
        rows.append(run_one("SQLite", course, students, f"sqlite:///{db}", lambda: sqlite_commits(db), args.gap))
        pg = PgServer().start()
        try:
            course, students = lay_out(Path(tmp) / "postgres", args.students)
            url = pg.create_database("bench")
            use_database(course, url)
            commits = lambda: int(pg.sql("bench", "SELECT pg_snapshot_xmax(pg_current_snapshot())::text")[0][0])  # noqa: E731
            rows.append(run_one("PostgreSQL", course, students, url, commits, args.gap))
        finally:
            pg.close()
    print(f"class of {args.students}, a manual save every {args.gap:g} s while grading")
    print(f"{'database':<11} {'wall s':>7} {'transactions':>12} {'saves':>6} {'failed':>6} {'longest wait s':>14}  all kept")
    for r in rows:
        print(f"{r['database']:<11} {r['wall_s']:>7.1f} {r['transactions']:>12} {r['saves']:>6} {r['save_errors']:>6} "
              f"{r['longest_wait_s']:>14.3f}  {r['all_kept']}" + (f"  (exit {r['exit']}: {r['stderr']})" if r['exit'] else ""))
    return 0 if all(r["all_kept"] and not r["exit"] and not r["save_errors"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
