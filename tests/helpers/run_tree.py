"""Run a command as one grading run whose every process can be found, however it ends.

    python tests/helpers/run_tree.py COMMAND...

This launcher makes itself a child subreaper (PR_SET_CHILD_SUBREAPER), so every
process the command starts, even one re-parented by a double fork or left
behind when its parent was killed, stays a descendant of the launcher. It prints
the command's pid, reaps, and exits only when no process of the run is left.
A test therefore knows the run's processes by the run's own process tree, not by
name, and never touches another grader running on the machine.
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def descendants(root: int) -> list[int]:
    """Live (not zombie) processes below ``root``."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] not in "ZX":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def open_files(pid: int) -> set[str]:
    """What the descriptors of ``pid`` point at ('pipe:[123]', paths, ...)."""
    found = set()
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return found
    for name in names:
        try:
            found.add(os.readlink(f"/proc/{pid}/fd/{name}"))
        except OSError:
            pass
    return found


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"


def describe(pids: list[int]) -> str:
    return "\n".join(f"{pid}: {cmdline(pid)[:200]}" for pid in pids)


class TreeRun:
    """A command started under this launcher, seen from a test."""

    def __init__(self, args: list[str]):
        self.launcher = subprocess.Popen([sys.executable, __file__, *map(str, args)], stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, text=True)
        self.pid = int(self.launcher.stdout.readline())        # the command (the run's main process)

    def processes(self) -> list[int]:
        return descendants(self.launcher.pid)

    def wait_until(self, condition, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline or self.launcher.poll() is not None:
                raise AssertionError(f"the run never reached the point to stop it at: {self.output()}")
            time.sleep(0.02)

    def signal(self, sig: int, group: bool = False) -> None:
        """``group``: the whole foreground group, as Ctrl-C in a terminal does."""
        (os.killpg if group else os.kill)(self.pid, sig)

    def end(self, within: float) -> tuple[int | None, str]:
        """(exit status, output) once no process of the run is left, waiting ``within`` seconds."""
        try:
            self.launcher.wait(timeout=within)
        except subprocess.TimeoutExpired:
            left = self.processes()
            listing = describe(left)
            for pid in left:                                     # ours: below our own launcher
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            raise AssertionError(f"{len(left)} processes of the run outlived it by {within} s:\n{listing}") from None
        return self.output()

    def output(self) -> tuple[int | None, str]:
        text = self.launcher.stdout.read() if self.launcher.poll() is not None else ""
        lines = text.splitlines()
        status = int(lines[-1].split()[1]) if lines and lines[-1].startswith("exit ") and \
            lines[-1].split()[1] != "None" else None
        return status, "\n".join(lines[:-1])


def main() -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("cannot become a subreaper", file=sys.stderr)
        return 2
    proc = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, start_new_session=True)
    print(proc.pid, flush=True)
    status = None
    while True:
        try:
            pid, code = os.wait()
        except ChildProcessError:
            break
        if pid == proc.pid:
            status = os.waitstatus_to_exitcode(code)
    print(f"exit {status}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
