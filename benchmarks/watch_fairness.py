"""One account flooding `watch`: the other students' first page, p99, with and without the flood (a script, not a test).

    .venv/bin/python benchmarks/watch_fairness.py [--flood 40] [--students 8] [--grading 0.2] [--links-mib 0]
                                                  [--repeats 3] [--smoke]

A course on a temporary exchange. ``--students`` students each submit once (their first page), one every
``--grading`` x 2 s; each submission costs ``--grading`` seconds in a stand-in grader (the same service,
journal and pages; only the sandboxed grading is replaced, so what is measured is the order, not the
grader's speed). Measured three ways side by side, alternating, ``--repeats`` times: alone (no flood), and
with one account dropping ``--flood`` submissions into inbound at once just before, served in the service's
turns (one submission per owner a pass, least read first) and in plain arrival order (every owner taken for one).
With ``--links-mib N`` each of the flood's notebooks is a hard link to one file of N MiB (four names, one file:
what the service reads for each of those folders is 4 N MiB), the flood of issue 35 (N = 63). A student's
latency is from its folder appearing to its page being published; each run's p99 over the students (with
8 students, their slowest), printed as the median over the repeats, with the ratio to alone. As root the
accounts are real Linux accounts (created and removed here); otherwise one shared account, and owners are
told by name.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "helpers")]

from autograder.course.settings import load_course          # noqa: E402
from autograder.journal.log import Journal                   # noqa: E402
from autograder.run.job import Graded, failed                # noqa: E402
from autograder.watch import service as service_module       # noqa: E402
from autograder.watch import turns                           # noqa: E402
from autograder.watch.config import watch_settings           # noqa: E402
from watch_helpers import A, submit_like_nbgrader            # noqa: E402


class Sleeper:
    """A grader whose every submission takes ``seconds``; answers what a real one would (the folder's digest)."""

    def __init__(self, seconds):
        self.seconds, self.done, self.busy = seconds, [], 0

    serial = True

    def submit(self, job):
        time.sleep(self.seconds)
        self.done.append((job, Graded(failed(job, "stand-in"))))

    def finished(self, wait=False):
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


def _hard_links(folder: Path, mib: int, uid: int) -> None:
    """Every notebook of ``folder`` one hard link to one file of ``mib`` MiB."""
    big = folder.parent / (folder.name + ".big")
    with open(big, "wb") as f:
        for _ in range(mib):
            f.write(os.urandom(1 << 20))
    os.chown(big, uid, uid)
    for notebook in folder.glob("*.ipynb"):
        notebook.unlink()
        os.link(big, notebook)


def run(flood: int, grading: float, fair: bool, owners: dict, links_mib: int = 0) -> list[float]:
    """The first-page latencies of every owner but the first, while ``flood`` submissions of the first wait."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        course = _course(tmp)
        inbound = tmp / "exchange/attention-course/inbound"
        hidden = tmp / "prepared"
        hidden.mkdir()
        flooder, *students = owners                              # the first account floods
        names = [submit_like_nbgrader(course, tmp, flooder) for _ in range(flood)]
        mine = [submit_like_nbgrader(course, tmp, student) for student in students]
        for name, who in [*((n, flooder) for n in names), *zip(mine, students)]:
            os.rename(inbound / name, hidden / name)
            for path in [hidden / name, *(hidden / name).rglob("*")]:
                os.chown(path, owners[who], owners[who])
            if links_mib and who == flooder:
                _hard_links(hidden / name, links_mib, owners[who])
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
        real = turns.owner_of
        if not fair:                                   # one owner for all: one queue, in arrival order
            turns.owner_of = lambda uid, student: "everyone"
        try:
            feeder.start()
            deadline = time.monotonic() + (flood + len(mine)) * grading * 3 + 30
            while time.monotonic() < deadline and not all(
                    (s := journal.state.entries.get(n)) and s.published for n in mine):
                service.step()
                time.sleep(0.01)
            feeder.join()
        finally:
            turns.owner_of = real
        return [journal.state.entries[n].published.at - appeared[n] for n in mine
                if journal.state.entries.get(n) and journal.state.entries[n].published]


def p99(got: list[float]) -> float:
    got = sorted(got)
    return got[min(len(got) - 1, int(0.99 * len(got)))] if got else float("nan")


def _accounts(students: int) -> tuple[dict, list]:
    """name -> uid, the flooder first; real accounts as root (and their names, to remove)."""
    tag = f"fair{os.getpid() % 10000}"
    wanted = [f"{tag}f", *(f"{tag}s{i}" for i in range(students))]
    if os.geteuid() != 0:
        return dict.fromkeys(wanted, os.geteuid()), []
    for name in wanted:
        subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", name], check=True, timeout=30)
    return {n: pwd.getpwnam(n).pw_uid for n in wanted}, wanted


WAYS = (("alone (no flood)", False, True), ("flood, the service's turns", True, True),
        ("flood, arrival order", True, False))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--flood", type=int, default=40)
    parser.add_argument("--students", type=int, default=8)
    parser.add_argument("--grading", type=float, default=0.2)
    parser.add_argument("--links-mib", type=int, default=0, help="each flood notebook a hard link to N MiB")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="a tiny run: does the script work")
    args = parser.parse_args()
    if args.smoke:
        args.flood, args.students, args.grading, args.repeats = 4, 2, 0.02, 1
    owners, made = _accounts(args.students)
    try:
        links = f" (each notebook a hard link to one {args.links_mib} MiB file)" if args.links_mib else ""
        print(f"one account floods {args.flood} submissions{links}; {args.students} other students submit once each; "
              f"{args.grading:g} s a submission; {args.repeats} repeats, alternating "
              f"({'real accounts' if made else 'one shared account: owners told by name'}; load average "
              f"{os.getloadavg()[0]:.1f} at start)")
        p99s, p50s = {w: [] for w, _, _ in WAYS}, {w: [] for w, _, _ in WAYS}
        unpublished = 0
        for _ in range(args.repeats):
            for way, flooded, fair in WAYS:
                got = run(args.flood if flooded else 0, args.grading, fair, owners, args.links_mib)
                unpublished += args.students - len(got)
                p99s[way].append(p99(got))
                p50s[way].append(statistics.median(got) if got else float("nan"))
        alone = statistics.median(p99s[WAYS[0][0]])
        for way, _, _ in WAYS:
            mid = statistics.median(p99s[way])
            print(f"  {way:<28} first page p99 {mid:6.2f} s (x{mid / alone:.1f} alone), p50 "
                  f"{statistics.median(p50s[way]):6.2f} s; p99 of each run: "
                  + ", ".join(f"{v:.2f}" for v in p99s[way]))
        print(f"  (one submission's budget: {args.grading:g} s; {unpublished} first pages never published; load "
              f"average {os.getloadavg()[0]:.1f} at the end)")
    finally:
        for name in made:
            subprocess.run(["userdel", name], timeout=30, check=False)


if __name__ == "__main__":
    main()
