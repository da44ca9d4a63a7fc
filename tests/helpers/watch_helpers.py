"""Helpers for the feedback-on-submit tests: a course on a temporary exchange, submissions written as
``nbgrader submit`` writes them, and readers of the service's journal."""
from __future__ import annotations

import base64
import json
import os
import shutil
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from autograder.samples import sample_class
from nbgrader_fast import run_nbgrader
from autograder.samples.synthetic import write_submission

A = "ch04_attention"
COURSE_ID = "attention-course"


def inbound_course(tmp: Path, settings: str = "") -> Path:
    """A course copy with no submissions whose nbgrader_config.py names an exchange in ``tmp`` (its inbound and
    feedback folders made, nothing released)."""
    from batch_helpers import make_class
    course = make_class(tmp, [])
    (tmp / "exchange" / "attention-course" / "inbound").mkdir(parents=True)
    (tmp / "exchange" / "attention-course" / "feedback").mkdir()
    with open(course / "nbgrader_config.py", "a") as f:
        f.write(f'\nc.Exchange.root = "{tmp / "exchange"}"\n{settings}')
    return course


def published(course: Path, name: str) -> bool:
    """watch's journal says the feedback page of inbound entry ``name`` is published."""
    from autograder.journal.log import read_events
    events = read_events(course / "watch" / "journal.jsonl")
    return any(e.entry == name and e.EVENT == "published" and e.kind == "feedback" for e in events)


def exchange_course(tmp: Path, settings: str = "") -> Path:
    """A course copy whose nbgrader_config.py names an exchange in ``tmp``; the assignment released there."""
    from batch_helpers import make_class
    course = make_class(tmp, [])
    shutil.rmtree(course / "release")                     # release_assignment wants nbgrader's own release
    (tmp / "exchange").mkdir()
    with open(course / "nbgrader_config.py", "a") as f:
        f.write(f'\nc.Exchange.root = "{tmp / "exchange"}"\n{settings}')
    run_nbgrader(["generate_assignment", A, "--log-level=WARN"], course, "generate_assignment")
    run_nbgrader(["release_assignment", A, "--log-level=WARN"], course, "release_assignment")
    return course


def student_args(tmp: Path, student: str) -> list[str]:
    return [f"--Exchange.root={tmp / 'exchange'}", f"--Exchange.cache={tmp / 'cache' / student}",
            f"--course={COURSE_ID}", f"--student={student}", "--log-level=WARN"]


def submit_like_nbgrader(course: Path, tmp: Path, student: str, sample: str = "correct-1",
                         overrides: dict | None = None) -> str:
    """What ``nbgrader submit`` leaves (inbound folder and the student's exchange cache, one secret), for
    the sample student ``sample`` or ``overrides``; returns the inbound entry's name. Files are written
    in nbgrader's order: notebooks, timestamp, secret, and the folder's mode opened to 0777 last."""
    code = overrides if overrides is not None else sample_class.students()[sample]
    build = tmp / "build" / f"{student}-{time.monotonic_ns()}" / student / A
    write_submission(course / "release" / A, course / "source" / A, build, code)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    name = f"{student}+{A}+{stamp}+{base64.urlsafe_b64encode(os.urandom(9)).decode()}"
    secret = os.urandom(64).hex()
    dest = tmp / "exchange" / COURSE_ID / "inbound" / name
    cache = tmp / "cache" / student / COURSE_ID / f"{student}+{A}+{stamp}"
    for folder in (dest, cache):
        shutil.copytree(build, folder)
        (folder / "timestamp.txt").write_text(stamp)
        (folder / "submission_secret.txt").write_text(secret)
    for path in dest.iterdir():
        path.chmod(0o644)
    dest.chmod(0o777)
    return name


def events(course: Path) -> list[dict]:
    path = course / "watch" / "journal.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def of_kind(course: Path, kind: str, entry: str | None = None) -> list[dict]:
    return [e for e in events(course) if e["event"] == kind and (entry is None or e["entry"] == entry)]


def wait_for(condition, timeout: float = 180, what: str = "", run=None) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if run is not None and run.launcher.poll() is not None:
            raise AssertionError(f"watch ended early: {run.output()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def done(course: Path, entry: str) -> bool:
    return any(e["entry"] == entry and e["event"] in ("published", "note") for e in events(course))


def watch_command(course: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "autograder", "watch", "--course", str(course), *extra]


def fetched_pages(home: Path) -> dict[str, dict[str, str]]:
    """timestamp folder -> notebook -> the page fetch_feedback put in the student's folder."""
    out: dict[str, dict[str, str]] = {}
    for page in sorted((home / A / "feedback").glob("*/*.html")):
        out.setdefault(page.parent.name, {})[page.stem] = page.read_text()
    return out
