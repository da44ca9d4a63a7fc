"""A deadline rush through a real JupyterHub: N students each submit K times within a window, each through
their own server (the Assignment List's own endpoint, POST /user/<name>/assignments/submit, which runs
nbgrader submit as that account), while `watch` runs as the Hub's service. Prints the latency from the
Submit request to the page being fetchable (watch's "published" line), p50 and p99, and the CPU seconds
and peak memory the Hub (with its proxy), the spawned servers (with their kernels) and watch (with its fork
server and workers) each used during the rush.

    sudo .venv/bin/python benchmarks/hub_rush.py --students 10 --submissions 5 --window 120

Needs root, as tests/env/hub/test_jupyterhub.py (real accounts, a Hub that starts servers as them), and
`make hub-proxy`. Everything it made is removed when it ends, however it ends (Ctrl-C or SIGTERM
included). ``--smoke``: one student, one submission, no window (the check that it still runs).
"""
from __future__ import annotations

import argparse
import os
import pwd
import random
import signal
import sys
import threading
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent.parent / "tests"), str(Path(__file__).resolve().parent.parent / "tests" / "helpers")]

from hub_helpers import A, COURSE_ID  # noqa: E402
from hub_site import fill_in, hub_site, requirements  # noqa: E402
from run_tree import cmdline  # noqa: E402
from watch_helpers import events as journal_events  # noqa: E402

TICKS = 100.0


def _usage(pid: int) -> tuple[float, float, int, int]:
    """(CPU seconds of the process, of its reaped children, resident bytes, parent pid)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()
        own, kids = (int(fields[11]) + int(fields[12])) / TICKS, (int(fields[13]) + int(fields[14])) / TICKS
        rss = int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * 4096
        return own, kids, rss, int(fields[1])
    except (OSError, ValueError, IndexError):
        return 0.0, 0.0, 0, 0


def _parents() -> dict[int, int]:
    """{pid: parent pid} of every live process."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                found[int(entry)] = int(stat[stat.rindex(")") + 2:].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    return found


def _groups(hub_pid: int) -> dict[int, str]:
    """Every process of the Hub's tree by what it belongs to, from the Hub's child it descends from (sandboxed
    workers run as uids of their own, so ancestry, not the uid, says whose they are): the proxy is the
    Hub's, the service is watch's, everything else (the servers, their kernels, nbgrader submit) the servers'."""
    parents = _parents()
    groups = {hub_pid: "hub"}
    for pid in parents:
        top = pid
        while top in parents and parents[top] != hub_pid and top != hub_pid:
            top = parents[top]
        if top == hub_pid or parents.get(top) != hub_pid:
            continue
        line = cmdline(top)
        groups[pid] = ("hub" if "configurable-http-proxy" in line else
                       "watch" if "autograder" in line and " watch " in f"{line} " else "servers")
    return groups


class Meter:
    """Samples every process of the Hub's tree once a second. A process's CPU is what it used since the first
    sample (all of it, for one that started later) plus what its reaped children used; a child seen alive
    and then gone, its parent still here, is taken back out of the parent's group (the parent's reaped-children
    time now holds it), so nothing counts twice. A process that started and ended between two samples counts
    only through its parent. Memory: the peak of each group's summed resident memory."""

    def __init__(self, hub):
        self.hub = hub
        self.first: dict[int, float] = {}
        self.last: dict[int, tuple[str, float, int]] = {}       # pid: (group, own + children's CPU, parent)
        self.live: set[int] = set()
        self.reaped: dict[str, float] = {}
        self.peak: dict[str, int] = {}
        self.stop = threading.Event()

    def sample(self) -> None:
        rss: dict[str, int] = {}
        seen: dict[int, tuple[str, float, int]] = {}
        for pid, group in _groups(self.hub.run.pid).items():
            own, kids, resident, parent = _usage(pid)
            self.first.setdefault(pid, own + kids if not self.last else 0.0)
            seen[pid] = (group, own + kids, parent)
            rss[group] = rss.get(group, 0) + resident
        for pid in self.live - seen.keys():
            _, cpu, parent = self.last[pid]
            if parent in seen:
                parent_group = seen[parent][0]
                self.reaped[parent_group] = self.reaped.get(parent_group, 0.0) + cpu
        self.last.update(seen)
        self.live = set(seen)
        for group, total in rss.items():
            self.peak[group] = max(self.peak.get(group, 0), total)

    def run(self) -> None:
        while not self.stop.wait(1.0):
            self.sample()

    def cpu(self) -> dict[str, float]:
        used = {group: -taken for group, taken in self.reaped.items()}
        for pid, (group, cpu, _) in self.last.items():
            used[group] = used.get(group, 0.0) + cpu - self.first.get(pid, 0.0)
        return used


def submit(hub, user: str) -> float:
    started = time.time()
    status, body = hub.api("POST", f"/user/{user}/assignments/submit?course_id={COURSE_ID}&assignment_id={A}",
                           timeout=300)
    if status != 200 or (isinstance(body, dict) and body.get("success") is False):
        raise RuntimeError(f"{user}'s submit failed: {status} {str(body)[:500]}")
    return started


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=10)
    parser.add_argument("--submissions", type=int, default=5, help="per student")
    parser.add_argument("--window", type=float, default=120.0, help="seconds the submissions are spread over")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="the smallest run: 1 student, 1 submission")
    args = parser.parse_args()
    if args.smoke:
        args.students, args.submissions, args.window = 1, 1, 0.0
    return args


def _interrupted(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")      # unwinds hub_site: the Hub stopped, the accounts removed


def main() -> int:
    args = _arguments()
    if os.geteuid() != 0 or requirements():
        print(f"hub_rush needs root and {requirements() or 'root'}: nothing was measured", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _interrupted)
    roles = [f"s{i:02d}" for i in range(args.students)]
    settings = f'c.FeedbackOnSubmit.limit = "{args.submissions + 1}/hour"\n'
    began = time.monotonic()
    with hub_site(roles, settings) as (site, accounts, hub):
        names = [accounts[r] for r in roles]
        print(f"the Hub, {len(names) + 1} accounts and the released course ready in {time.monotonic() - began:.0f} s")
        rush(args, site, hub, names)
    made = [accounts[r] for r in ["teach", *roles]]
    left = [n for n in made if _exists(n)]
    print(f"ended: the Hub stopped, {len(made) - len(left)} of {len(made)} accounts removed"
          f"{'; left: ' + ', '.join(left) if left else ''} ({time.monotonic() - began:.0f} s in all)")
    return 1 if left else 0


def _exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def rush(args, site, hub, names: list[str]) -> None:
    began = time.monotonic()
    hub.start_servers(names, within=900)
    for name in names:
        status, body = hub.api("POST", f"/user/{name}/assignments/fetch?course_id={COURSE_ID}&assignment_id={A}")
        assert status == 200, (name, status, body)
        fill_in(hub, name)
    print(f"{len(names)} servers spawned, each student's notebooks fetched and filled in"
          f" {time.monotonic() - began:.0f} s")
    rng = random.Random(args.seed)
    plan = sorted((rng.uniform(0, args.window), name) for name in names for _ in range(args.submissions))
    meter = Meter(hub)
    meter.sample()
    sampler = threading.Thread(target=meter.run, daemon=True)
    sampler.start()
    pressed: dict[str, list[float]] = {name: [] for name in names}
    failed: list[str] = []
    lock = threading.Lock()

    def one(at: float, name: str) -> None:
        time.sleep(max(0.0, start + at - time.monotonic()))
        try:
            when = submit(hub, name)
        except (OSError, RuntimeError) as exc:
            with lock:
                failed.append(str(exc)[:300])
            return
        with lock:
            pressed[name].append(when)

    start = time.monotonic()
    threads = [threading.Thread(target=one, args=item, daemon=True) for item in plan]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    latencies = wait_for_pages(site, pressed, len(plan) - len(failed))
    meter.stop.set()
    sampler.join()
    meter.sample()
    report(args, plan, latencies, meter, time.monotonic() - start)
    for problem in failed:
        print(f"a submit failed: {problem}")
    if failed or len(latencies) < len(plan):
        raise RuntimeError(f"{len(failed)} submits failed, {len(plan) - len(latencies)} pages not published")


def wait_for_pages(site, pressed: dict[str, list[float]], expected: int, within: float = 600) -> list[float]:
    """Latency of each submission: its Submit request's start to its 'published' line, matched per student
    in order (a student's submissions are published in the order they arrived). Only the pages of the rush's
    own students count (tests/env/hub/test_jupyterhub.py runs the smoke on a Hub whose watch published others)."""
    deadline = time.monotonic() + within
    while True:
        try:
            events = journal_events(site.course)
        except ValueError:                               # a line caught half written: read again
            time.sleep(0.1)
            continue
        student = {e["entry"]: e.get("student") for e in events if e["event"] == "received"}
        published: dict[str, list[float]] = {}
        for e in events:
            if e["event"] == "published" and student.get(e["entry"]) in pressed:
                published.setdefault(student[e["entry"]], []).append(float(e["at"]))
        if sum(map(len, published.values())) >= expected or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    latencies = []
    for name, presses in pressed.items():
        for press, done in zip(sorted(presses), sorted(published.get(name, []))):
            latencies.append(done - press)
    return latencies


def report(args, plan, latencies: list[float], meter: Meter, seconds: float) -> None:
    n = len(plan)
    print(f"{args.students} students x {args.submissions} submissions = {n} within {args.window:g} s; "
          f"{len(latencies)} pages published, the last {seconds:.0f} s after the first Submit; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if latencies:
        print(f"Submit to fetchable: p50 {percentile(latencies, 0.5):.2f} s, p99 {percentile(latencies, 0.99):.2f} s,"
              f" max {max(latencies):.2f} s")
    cpu = meter.cpu()
    for group in ("hub", "servers", "watch"):
        print(f"{group:8s} CPU {cpu.get(group, 0.0):7.1f} s   peak memory {meter.peak.get(group, 0) / 2**20:7.0f} MiB")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt as exc:
        print(f"interrupted ({exc or 'Ctrl-C'}): the Hub stopped, the accounts and their files removed",
              file=sys.stderr)
        sys.exit(130)
