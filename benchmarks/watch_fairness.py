"""One account flooding `watch`, another student's latency (a script, not a test).

    .venv/bin/python benchmarks/watch_fairness.py [--flood 40] [--other 8] [--grading 0.2] [--smoke]

A course on a temporary exchange; one account drops ``--flood`` submissions into inbound at once, and
another student submits ``--other`` times while the flood is being graded (every ``--grading`` x 2 s).
Each submission costs ``--grading`` seconds in a stand-in grader (the same service, journal and pages;
only the sandboxed grading is replaced, so the number measured is the order, not the grader's speed).
The other student's latency is from its folder appearing to its page being published. Printed for the
service's order (one submission per owner a pass) and for plain arrival order. As root the two are real
Linux accounts (created and removed here); otherwise one shared account, and owners are told by name.
"""
from __future__ import annotations

import argparse
import os
import pwd
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from autograder.course.settings import load_course          # noqa: E402
from autograder.journal.log import Journal                   # noqa: E402
from autograder.run.batch import failed_record, folder_digest  # noqa: E402
from autograder.watch import service as service_module       # noqa: E402
from autograder.watch.config import watch_settings           # noqa: E402
from autograder.watch.grading import Graded                  # noqa: E402
from watch_helpers import A, submit_like_nbgrader            # noqa: E402


class Sleeper:
    """A grader whose every submission takes ``seconds``; answers what a real one would (the folder's digest)."""

    def __init__(self, seconds):
        self.seconds, self.done, self.busy = seconds, [], 0

    def submit(self, key, course, assignment, folder, student, visible):
        time.sleep(self.seconds)
        record = failed_record(student, "stand-in", course=course, assignment=assignment)
        self.done.append((key, Graded(replace(record, submission=folder_digest(folder, course, assignment)))))

    def finished(self):
        done, self.done = self.done, []
        return done


def _course(tmp: Path) -> Path:
    from batch_helpers import make_class
    course = make_class(tmp, [])
    (tmp / "exchange/attention-course/inbound").mkdir(parents=True)
    (tmp / "exchange/attention-course/feedback").mkdir()
    with open(course / "nbgrader_config.py", "a") as f:
        f.write(f'\nc.Exchange.root = "{tmp / "exchange"}"\nc.FeedbackOnSubmit.limit = "1000/day"\n')
    return course


def run(flood: int, other: int, grading: float, fair: bool, owners: dict) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        course = _course(tmp)
        inbound = tmp / "exchange/attention-course/inbound"
        hidden = tmp / "prepared"
        hidden.mkdir()
        flooder, student = owners
        names = [submit_like_nbgrader(course, tmp, flooder) for _ in range(flood)]
        mine = [submit_like_nbgrader(course, tmp, student) for _ in range(other)]
        for name in names + mine:
            os.rename(inbound / name, hidden / name)
            uid = owners[flooder if name in names else student]
            for path in [hidden / name, *(hidden / name).rglob("*")]:
                os.chown(path, uid, uid)
        settings = watch_settings(load_course(course), A)
        (settings.state / "records").mkdir(parents=True, exist_ok=True)
        journal = Journal(settings.state)
        service = service_module.Service(settings, journal, Sleeper(grading), lambda t: None, lambda t: None)
        appeared = {}
        for name in names:
            os.rename(hidden / name, inbound / name)
            appeared[name] = time.time()

        def others():
            for name in mine:
                time.sleep(grading * 2)
                os.rename(hidden / name, inbound / name)
                appeared[name] = time.time()
        feeder = threading.Thread(target=others)
        real = service_module.fair
        if not fair:
            service_module.fair = lambda ready, key: sorted(ready, key=lambda r: (r[0], r[1]))
        try:
            feeder.start()
            deadline = time.monotonic() + (flood + other) * grading * 3 + 30
            while time.monotonic() < deadline and not all(
                    (s := journal.state.entries.get(n)) and s.published for n in mine):
                service.step()
                time.sleep(0.01)
            feeder.join()
        finally:
            service_module.fair = real
        return [journal.state.entries[n].published.at - appeared[n] for n in mine
                if journal.state.entries.get(n) and journal.state.entries[n].published]


def _accounts() -> tuple[dict, list]:
    if os.geteuid() != 0:
        me = os.geteuid()
        return {"flooder": me, "student": me}, []
    names = [f"fair{os.getpid() % 10000}{w}" for w in ("flood", "ann")]
    for name in names:
        subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", name], check=True, timeout=30)
    return {n: pwd.getpwnam(n).pw_uid for n in names}, names


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--flood", type=int, default=40)
    parser.add_argument("--other", type=int, default=8)
    parser.add_argument("--grading", type=float, default=0.2)
    parser.add_argument("--smoke", action="store_true", help="a tiny run: does the script work")
    args = parser.parse_args()
    if args.smoke:
        args.flood, args.other, args.grading = 4, 2, 0.02
    owners, made = _accounts()
    try:
        print(f"one account floods {args.flood} submissions, another submits {args.other}; {args.grading:g} s each "
              f"({'real accounts' if made else 'one shared account: owners told by name'})")
        for fair in (True, False):
            got = sorted(run(args.flood, args.other, args.grading, fair, owners))
            p99 = got[min(len(got) - 1, int(0.99 * len(got)))] if got else float("nan")
            print(f"  {'one per owner a pass' if fair else 'arrival order       '}: the other student's latency "
                  f"p50 {statistics.median(got) if got else float('nan'):.2f} s, p99 {p99:.2f} s "
                  f"({len(got)}/{args.other} published; one submission's budget {args.grading:g} s)")
    finally:
        for name in made:
            subprocess.run(["userdel", name], timeout=30, check=False)


if __name__ == "__main__":
    main()
