"""What a grading account's worker must never learn, and running the grader as that account.

``class_folder`` lays out a course where the README's Hub keeps it, outside /tmp (the private tmpfs over
/tmp would hide one inside it by accident): classmates' submitted notebooks, graded records and a gradebook.
``SNOOP`` is student code that tries to learn about them without reading them (stat, list, watch) and about
the grader's processes; it prints what it learned, as JSON, so the test can name each leak.
``as_account`` runs a command as a real account (setpriv: its uid, gid and groups; a clean environment, its
own temporary folder), the way the Hub starts `watch` and the instructor's terminal runs `check`.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

A = "ch04_attention"
CLASSMATES = ("alice", "bob")

SNOOP = r'''
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
learned = {}

def attempt(what, fn):
    try:
        found = fn()
    except OSError:
        return
    if found is not None and found is not False and found != -1:
        learned[what] = repr(found)[:200]

course = COURSE
attempt("stat the course", lambda: os.stat(course).st_mtime)
attempt("stat a classmate's folder", lambda: os.stat(course + "/submitted/bob").st_mtime)
attempt("stat a classmate's notebook", lambda: os.stat(course + "/submitted/bob/ch04_attention/ex1_attention.ipynb").st_size)
attempt("stat a classmate's record", lambda: os.stat(course + "/grading/records/bob.json").st_size)
attempt("stat the gradebook", lambda: os.stat(course + "/gradebook.db").st_size)
attempt("list the classmates", lambda: os.listdir(course + "/submitted"))
attempt("inotify at all", lambda: libc.inotify_init1(0))
fd = libc.inotify_init1(0)
attempt("watch the submissions", lambda: libc.inotify_add_watch(fd, (course + "/submitted").encode(), 0xfff))
attempt("watch the records", lambda: libc.inotify_add_watch(fd, (course + "/grading/records").encode(), 0xfff))
attempt("stat the grader's process", lambda: os.stat("/proc/%d" % GRADER).st_uid)
print("LEARNED " + json.dumps(learned))
'''

LEAKS = ("stat the course", "stat a classmate's folder", "stat a classmate's notebook", "stat a classmate's record",
         "stat the gradebook", "list the classmates", "inotify at all", "watch the submissions",
         "watch the records", "stat the grader's process")


def snoop_code(course: Path, grader_pid: int) -> str:
    return SNOOP.replace("COURSE", repr(str(course))).replace("GRADER", str(grader_pid))


def learned(printed: str) -> dict:
    """What the snooping cell learned (the line it printed)."""
    line = next(line for line in printed.splitlines() if line.startswith("LEARNED "))
    return json.loads(line[len("LEARNED "):])


@contextmanager
def class_folder(owner: str | None = None):
    """A course below /var/tmp (as a course in a home folder: outside /tmp), with two classmates' submissions,
    their records and a gradebook; owned by ``owner`` when given. Removed afterwards."""
    base = Path(tempfile.mkdtemp(prefix="agcourse-", dir="/var/tmp"))
    try:
        base.chmod(0o755)
        course = base / "course"
        for student in CLASSMATES:
            folder = course / "submitted" / student / A
            folder.mkdir(parents=True)
            (folder / "ex1_attention.ipynb").write_text('{"cells": []}\n' * (10 if student == "bob" else 1))
            (course / "grading" / "records").mkdir(parents=True, exist_ok=True)
            (course / "grading" / "records" / f"{student}.json").write_text('{"total": 28}\n')
        (course / "gradebook.db").write_bytes(b"SQLite format 3\0" + bytes(4096))
        if owner:
            subprocess.run(["chown", "-R", f"{owner}:{owner}", str(base)], check=True)
        yield course
    finally:
        shutil.rmtree(base, ignore_errors=True)


def account_env(account: str, home: Path, tmp: Path) -> dict[str, str]:
    return {"HOME": str(home), "USER": account, "LOGNAME": account, "TMPDIR": str(tmp), "LANG": "C.UTF-8",
            "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}


def as_account(account: str, args: list[str], home: Path, tmp: Path, cwd: Path | None = None,
               timeout: float = 600, wrap: list[str] = (), start: bool = False):
    """``args`` run as ``account`` (setpriv: its uid, its gid, its groups), with a clean environment whose
    temporary folder is ``tmp``; ``wrap``: a command put before ``args`` (run as the account too). Waits for
    it (a CompletedProcess), or with ``start`` returns the running Popen (its output in one pipe)."""
    env = [f"{k}={v}" for k, v in account_env(account, home, tmp).items()]
    command = ["setpriv", f"--reuid={account}", f"--regid={account}", "--init-groups", "env", "-i", *env, *wrap,
               *args]
    if start:
        return subprocess.Popen(command, cwd=cwd or home, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return subprocess.run(command, cwd=cwd or home, capture_output=True, text=True, timeout=timeout)


NO_USER_NAMESPACES = r'''
import errno, os, sys
import pyseccomp as sc
refuse = sc.SyscallFilter(sc.ALLOW)
refuse.add_rule(sc.ERRNO(errno.EPERM), "unshare", sc.Arg(0, sc.MASKED_EQ, 0x10000000, 0x10000000))
refuse.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, 0x10000000, 0x10000000))
refuse.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
refuse.load()
os.execvp(sys.argv[1], sys.argv[1:])
'''


def without_user_namespaces() -> list[str]:
    """A command prefix under which the kernel refuses every new user namespace (EPERM, as on a machine that
    allows none to unprivileged accounts): a seccomp filter, inherited by everything the command starts."""
    return [sys.executable, "-c", NO_USER_NAMESPACES]


def processes_named(*names: str) -> list[tuple[int, str]]:
    """Live processes whose name (comm) is one of ``names``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        name, state = stat[stat.index("(") + 1: stat.rindex(")")], stat[stat.rindex(")") + 2]
        if name in names and state not in "ZX":
            found.append((int(entry), name))
    return found
