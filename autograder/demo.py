"""`make demo`: grade the bundled sample class with the hardened grader and show the results."""
from __future__ import annotations

import shutil
from pathlib import Path

from .batch import grade_batch
from .hardened import PACKAGE_COURSE
from .inert import one_line
from .release import generate_release
from .sample_class import lay_out
from .seeds import ASSIGNMENT_ID

def prepare(course: Path, workdir: Path, assignment: str = ASSIGNMENT_ID) -> Path:
    """A fresh demo course: this course's config, source and release, plus the sample class."""
    if not (course / "release" / assignment).is_dir():
        generate_release(course, assignment=assignment)
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    shutil.copy(course / "nbgrader_config.py", workdir)
    for part in ("source", "release"):
        shutil.copytree(course / part, workdir / part)
    lay_out(workdir, assignment)
    return workdir


def summary_table(records: list[dict]) -> str:
    lines = [f"{'student':<26} {'total':>7}  {'review':<6}  diagnoses"]
    for r in sorted(records, key=lambda r: r["student_id"]):
        diags = ", ".join(sorted({c["diagnosis"] for c in r["checks"] if c.get("diagnosis")}))
        lines.append(f"{one_line(r['student_id']):<26} {r['total']:>3}/{r['max_total']:<3}  "
                     f"{'yes' if r['needs_review'] else '':<6}  {diags}")
    return "\n".join(lines)


def run_demo(course: Path = PACKAGE_COURSE, workdir: Path | None = None, workers: int | None = None) -> Path:
    workdir = workdir or course / "demo"
    demo = prepare(course, workdir)
    result = grade_batch(course=demo, out=demo / "grading", workers=workers)
    print(summary_table(result.records))
    full = sum(r["total"] == r["max_total"] for r in result.records)
    review = sum(r["needs_review"] for r in result.records)
    print(f"\n{len(result.records)} submissions graded: {full} full marks, {review} need review.")
    print(f"grades:   {result.out / 'grades.csv'}")
    print(f"feedback: {result.out / 'feedback'}/<student>/index.html")
    print(f"report:   {result.out / 'report.html'}")
    return result.out / "report.html"
