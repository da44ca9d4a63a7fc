"""Latency of feedback on submit (a script, not a test): from a submission's folder appearing in the
exchange's inbound folder to its pages being published.

    .venv/bin/python benchmarks/watch_latency.py [--submissions 100] [--seconds 60] [--poll S] [--smoke]

Builds a course on a temporary exchange, prepares the submissions (honest students of the sample
class, each with its own secret, as `nbgrader submit` leaves them) beside inbound, starts
`python -m autograder watch`, then moves them into inbound one by one at random moments spread
over the window (a folder appears whole, as nbgrader's submit finishes it). The latency of each is
its `published` time in the service's journal less the moment it appeared. Prints p50, p99 and the
maximum, and the grading time per submission. The limit is lifted (the benchmark's students submit
once each anyway) and every submission is graded in full.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.samples import sample_class  # noqa: E402
from autograder.samples.synthetic import write_submission  # noqa: E402

A, COURSE_ID = "ch04_attention", "attention-course"
HONEST = [s for s in sample_class.students() if not s.startswith(("hostile-", "damaged-"))]


def make_course(tmp: Path) -> Path:
    course = tmp / "course"
    course.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", course)
    for part in ("source", "release"):
        shutil.copytree(ROOT / part, course / part)
    with open(course / "nbgrader_config.py", "a") as f:
        f.write(f'\nc.Exchange.root = "{tmp / "exchange"}"\nc.FeedbackOnSubmit.limit = "1000/day"\n')
    for folder in ("inbound", "feedback"):
        (tmp / "exchange" / COURSE_ID / folder).mkdir(parents=True)
    return course


def prepare(course: Path, staging: Path, n: int) -> list[str]:
    """n complete submission folders in ``staging`` (same file system as inbound), named as nbgrader names them."""
    variants, names = sample_class.students(), []
    for i in range(n):
        student = f"s{i:03d}"
        stamp = f"2026-12-01 09:{i // 60:02d}:{i % 60:02d}.000000 UTC"
        name = f"{student}+{A}+{stamp}+r{i:03d}"
        folder = write_submission(course / "release" / A, course / "source" / A, staging / "build" / student / A,
                                  variants[HONEST[i % len(HONEST)]])
        (folder / "timestamp.txt").write_text(stamp)
        (folder / "submission_secret.txt").write_text(os.urandom(64).hex())
        folder.chmod(0o777)
        folder.rename(staging / name)
        names.append(name)
    return names


def published(course: Path) -> dict[str, float]:
    path = course / "watch" / "journal.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    return {e["entry"]: e["at"] for e in events if e["event"] == "published"}, [
        e["seconds"] for e in events if e["event"] == "graded"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--submissions", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--poll", default=None, help="pass --poll to watch (default: inotify)")
    parser.add_argument("--smoke", action="store_true", help="two submissions in a second: does the script run "
                        "(tests/house/test_benchmarks.py)")
    args = parser.parse_args()
    if args.smoke:
        args.submissions, args.seconds = 2, 1.0
    tmp = Path(tempfile.mkdtemp(prefix="watch-latency-"))
    try:
        course = make_course(tmp)
        inbound = tmp / "exchange" / COURSE_ID / "inbound"
        names = prepare(course, tmp / "staging", args.submissions)
        command = [sys.executable, "-m", "autograder", "watch", "--course", str(course)]
        watch = subprocess.Popen(command + (["--poll", args.poll] if args.poll else []), stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
        if "watching" not in watch.stdout.readline():
            raise SystemExit("watch did not start")
        time.sleep(2.0)                                   # its fork server has ready workers
        rng = random.Random(0)
        at = sorted(rng.uniform(0, args.seconds) for _ in names)
        load, start, arrived = os.getloadavg()[0], time.time(), {}
        for name, offset in zip(names, at):
            time.sleep(max(0.0, start + offset - time.time()))
            os.rename(tmp / "staging" / name, inbound / name)
            arrived[name] = time.time()
        deadline = time.monotonic() + 300
        while len(published(course)[0]) < len(names) and time.monotonic() < deadline:
            time.sleep(0.2)
        done, grading = published(course)
        if os.environ.get("WATCH_LATENCY_DEBUG"):
            events = [json.loads(x) for x in (course / "watch" / "journal.jsonl").read_text().splitlines()]
            for e in events:
                print(e["event"], e["entry"][:4], round(e.get("at", 0) - start, 2), round(arrived.get(e["entry"], 0) - start, 2))
        watch.send_signal(signal.SIGTERM)
        watch.wait(timeout=30)
        latency = sorted(done[n] - arrived[n] for n in names if n in done)
        if len(latency) < len(names):
            print(f"only {len(latency)} of {len(names)} were published within 300 s")
        q = statistics.quantiles(latency, n=100, method="inclusive")
        print(f"{len(latency)} submissions over {args.seconds:g} s on {os.cpu_count()} cores "
              f"(load average at the start: {load:.1f}, at the end: {os.getloadavg()[0]:.1f}); inotify={'no' if args.poll else 'yes'}")
        print(f"latency from the folder appearing to its pages published: p50 {q[49]:.2f} s, p99 {q[98]:.2f} s, "
              f"max {latency[-1]:.2f} s")
        print(f"grading per submission (in the service): median {statistics.median(grading):.2f} s, "
              f"max {max(grading):.2f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
