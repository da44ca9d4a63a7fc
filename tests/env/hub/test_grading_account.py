"""The grader run as the instructor's account, not root, as the README's Hub runs it (issue 35, item 10; issue 38).

A real Linux account (useradd) owns a course in its home and runs `doctor`, `check`, `grade` and `watch` itself
(setpriv: its uid, gid and groups), first as this machine allows (unprivileged user namespaces: each worker gets
a user, PID, network, IPC and mount namespace and a root of its own), then as a machine that refuses them (a
seccomp filter around the command makes the kernel refuse every new user namespace, as such a machine does).
A submission's cell starts a double-forked daemon in a session of its own and a process in a process group
of its own whose parent stays alive: neither outlives grading, in any of the three commands, either way.
`doctor` names every layer and says, for each one missing, what that costs; a worker learns nothing of the
course by stat or inotify; no run leaves a sandbox folder in the account's temporary folder.

Needs root (useradd); skips and says so otherwise.
"""
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.samples.synthetic import write_submission
from autograder.sandbox.status import SANDBOX_LAYERS
from hub_accounts import Accounts, processes_of, python_paths, traversable
from hub_grading import LEAKS, as_account, learned, processes_named, snoop_code, without_user_namespaces
from watch_helpers import exchange_course, of_kind, submit_like_nbgrader

MACHINES = {"user namespaces": [], "no user namespaces": None}     # None: without_user_namespaces(), at run time
TAG = secrets.token_hex(3)
DAEMON, GROUP = f"agd{TAG}", f"agg{TAG}"                            # process names (comm: at most 15 bytes)
LINGER = f"""
import os, time, ctypes
def _named(name):
    ctypes.CDLL(None).prctl(15, name, 0, 0, 0)
if os.fork() == 0:                       # a daemon: double fork, a session of its own
    os.setsid()
    if os.fork() == 0:
        _named({DAEMON.encode()!r})
        while True:
            time.sleep(0.05)
    os._exit(0)
if os.fork() == 0:                       # a process group of its own; its parent, the worker, stays
    os.setpgid(0, 0)
    _named({GROUP.encode()!r})
    while True:
        time.sleep(0.05)
time.sleep(0.3)
"""


class Account:
    """One real account with a home (0700), its own temporary folder, and the course in its home."""

    def __init__(self, base: Path):
        self.accounts = Accounts(["grader"], base / "home")
        self.accounts.create()
        self.name = self.accounts["grader"]
        self.home = base / "home" / self.name
        self.tmp = self.home / "tmp"
        self.course = exchange_course(self.home)                 # home/course and home/exchange, released
        self.tmp.mkdir()
        subprocess.run(["chown", "-R", f"{self.name}:{self.name}", str(self.home)], check=True)

    def run(self, args: list[str], machine: str, timeout: float = 600, **kwargs) -> subprocess.CompletedProcess:
        wrap = without_user_namespaces() if MACHINES[machine] is None else []
        return as_account(self.name, args, self.home, self.tmp, timeout=timeout, wrap=wrap, **kwargs)

    def popen(self, args: list[str], machine: str) -> subprocess.Popen:
        wrap = without_user_namespaces() if MACHINES[machine] is None else []
        return as_account(self.name, args, self.home, self.tmp, wrap=wrap, start=True)

    def submission(self, student: str) -> Path:
        folder = self.course / "submitted" / student / "ch04_attention"
        write_submission(self.course / "release" / "ch04_attention", self.course / "source" / "ch04_attention",
                         folder, {}, extra_cells={"ex2_causal_mask": [LINGER]})
        subprocess.run(["chown", "-R", f"{self.name}:{self.name}", str(self.course / "submitted")], check=True)
        return folder


@pytest.fixture(scope="module")
def account():
    if os.geteuid() != 0:
        pytest.skip("needs root to make a real account (useradd) and run the grader as it")
    base = Path("/var/tmp") / f"agacct-{TAG}"                 # outside /tmp, as a home folder is
    base.mkdir(mode=0o755)
    try:
        with traversable(python_paths()):
            made = Account(base)
            try:
                yield made
            finally:
                made.accounts.remove()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _gone(*names: str, within: float = 10.0) -> list:
    """Processes named ``names`` still live ``within`` seconds after the call (the kernel ends them moments
    after grading sends the kill)."""
    deadline = time.monotonic() + within
    while processes_named(*names) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = processes_named(*names)
    for pid, _ in left:                                     # never leave them running after a failure
        os.kill(pid, signal.SIGKILL)
    return left


def _sandbox_folders(account: Account) -> list[str]:
    return sorted(p.name for p in account.tmp.glob("autograder-sandbox-*"))


PYTHON = [sys.executable, "-m", "autograder"]


@pytest.mark.parametrize("machine", MACHINES)
def test_doctor_names_every_layer_and_what_each_missing_one_costs(account, machine):
    done = account.run([*PYTHON, "doctor"], machine)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    rows = {name: next((i for i, line in enumerate(lines) if line.startswith(name + " ")), None)
            for name in SANDBOX_LAYERS.values()}
    assert None not in rows.values(), [n for n, i in rows.items() if i is None]
    for name, i in rows.items():
        state = lines[i][len(name):].strip()
        if state.startswith("missing"):
            assert lines[i + 1].strip().startswith("without it: "), (name, lines[i + 1])
    pid = lines[rows[SANDBOX_LAYERS["PID namespace"]]]
    own_root = lines[rows[SANDBOX_LAYERS["own root"]]]
    if machine == "user namespaces":
        assert "applied" in pid and "applied" in own_root, done.stdout
    else:
        assert "missing" in pid and "missing" in own_root, done.stdout
    assert lines[-1].startswith("This deployment lacks") and "cgroup pids and memory" in lines[-1], lines[-1]


@pytest.mark.parametrize("machine", MACHINES)
def test_nothing_a_student_starts_outlives_check(account, machine):
    folder = account.submission(f"check{machine[:2]}")
    before = _sandbox_folders(account)
    for _ in range(3):                                     # each run used to leave its sandbox folder behind
        done = account.run([*PYTHON, "check", str(folder), "--course", str(account.course)], machine)
        assert done.returncode == 0 and "total 28/28" in done.stdout, done.stdout + done.stderr
        assert _gone(DAEMON, GROUP) == [], "a process the student started outlived check"
    assert _sandbox_folders(account) == before, "check left its sandbox folder in the temporary folder"


@pytest.mark.parametrize("machine", MACHINES)
def test_nothing_a_student_starts_outlives_grade(account, machine):
    student = f"grade{machine[:2]}"
    account.submission(student)
    out = account.course / f"grading-{machine[:2]}"
    done = account.run([*PYTHON, "grade", "--course", str(account.course), "--student", student, "--out", str(out)],
                       machine)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _gone(DAEMON, GROUP) == [], "a process the student started outlived grade"
    assert _sandbox_folders(account) == [], "grade left its sandbox folder in the temporary folder"


@pytest.mark.parametrize("machine", MACHINES)
def test_nothing_a_student_starts_outlives_its_grading_in_watch(account, machine):
    """`watch` keeps its fork server between submissions: what a student started must end with its worker,
    while the service runs on; and nothing of the account is left once the service stops."""
    service = account.popen([*PYTHON, "watch", "--course", str(account.course)], machine)
    try:
        student = f"watch{machine[:2]}"
        entry = submit_like_nbgrader(account.course, account.home, student,
                                     overrides={"causal_mask": "def causal_mask(n):\n    return np.triu("
                                                "np.full((n, n), -np.inf), k=1)\n" + LINGER})
        deadline = time.monotonic() + 240
        while not of_kind(account.course, "published", entry):
            assert service.poll() is None and time.monotonic() < deadline, service.stdout.read() if \
                service.poll() is not None else "no page published in time"
            time.sleep(0.2)
        assert _gone(DAEMON, GROUP) == [], "a process the student started outlived its grading in watch"
        assert service.poll() is None, "watch still serves"
    finally:
        service.send_signal(signal.SIGTERM)
        service.wait(timeout=60)
    assert _gone(DAEMON, GROUP) == []
    deadline = time.monotonic() + 30
    while processes_of({account.accounts.uid(account.name)}) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_of({account.accounts.uid(account.name)}) == [], "the account's processes outlived watch"
    assert _sandbox_folders(account) == [], "watch left its sandbox folder in the temporary folder"


SNOOPING_WORKER = """
import os, sys
from autograder.sandbox.forkclient import ForkServer
from autograder.sandbox.handle import WorkerHandle
from autograder.sandbox.limits import Limits
server = ForkServer()
try:
    handle = WorkerHandle(server, Limits())
    try:
        assert handle.run_cell(open(sys.argv[1]).read(), 30)["ok"]
        print(handle.request({"op": "output"}, 10)[0]["stdout"])
    finally:
        handle.cleanup()
finally:
    server.close()
"""


def test_a_worker_of_the_account_learns_nothing_of_its_course(account):
    """What tests/sandbox/test_own_root.py asks of a root grader's worker, asked of the account's: the course
    (in the account's home) cannot be stat'ed, listed or watched, nor the grader's processes seen."""
    script, cell = account.home / "snoop_worker.py", account.home / "snoop_cell.py"
    script.write_text(SNOOPING_WORKER)
    cell.write_text(snoop_code(account.course, os.getpid()))
    subprocess.run(["chown", f"{account.name}:{account.name}", str(script), str(cell)], check=True)
    done = account.run([sys.executable, str(script), str(cell)], "user namespaces")
    assert done.returncode == 0, done.stdout + done.stderr
    found = learned(done.stdout)
    assert [leak for leak in LEAKS if leak in found] == [], found
