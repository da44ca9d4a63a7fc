"""The pieces that make a run end cleanly: the output-folder lock, the writer's run check,
parent-death, and stop signals held while a record is written. (Whole runs killed at each
stage: tests/run/test_faults.py.)"""
import os
import signal
import subprocess
import sys
import time

import pytest

from autograder.run.batch import grade_batch
from autograder.lifecycle import Stop, critical, stop_on_signals
from autograder.gradebook.writer import GONE
from autograder.gradebook.runlock import RunLocked, RunLocks, folder_lock
from batch_helpers import make_class
from conftest import ROOT

HOLD_LOCK = ("import sys, time\nfrom autograder.gradebook.runlock import RunLocks\n"
             "RunLocks(*sys.argv[1:]).__enter__()\nprint('held', flush=True)\ntime.sleep(60)\n")


def _holder(out, db_url=None):
    args = [sys.executable, "-c", HOLD_LOCK, str(out), *([db_url] if db_url else [])]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_run_on_the_same_folder_is_refused_with_the_holder(tmp_path):
    course = make_class(tmp_path, ["correct-1"])
    holder = _holder(tmp_path / "out")
    try:
        with pytest.raises(RunLocked, match=rf"another grading run \(pid {holder.pid}, started at .+\) is writing "
                                            rf"to the output folder {tmp_path / 'out'}; wait for it or stop it"):
            grade_batch(course=course, out=tmp_path / "out", workers=1, progress=False)
        cli = subprocess.run([sys.executable, "-m", "autograder", "grade", "--course", str(course),
                              "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
        assert cli.returncode == 1 and f"another grading run (pid {holder.pid}" in cli.stderr
        assert not (tmp_path / "out" / "records").exists()
    finally:
        holder.kill()
        holder.wait()


def test_a_run_on_the_same_gradebook_is_refused_whatever_its_output_folder(tmp_path):
    course = make_class(tmp_path, ["correct-1"])
    db = tmp_path / "course" / "gradebook.db"
    holder = _holder(tmp_path / "elsewhere", f"sqlite:///{db}")
    try:
        with pytest.raises(RunLocked, match=rf"another grading run \(pid {holder.pid}, .*\) is writing to "
                                            rf"the gradebook {db}; wait for it or stop it"):
            grade_batch(course=course, out=tmp_path / "out", workers=1, progress=False,
                        gradebook_url=f"sqlite:///{db}", create_gradebook=True)
        grade_batch(course=course, out=tmp_path / "out", workers=1, progress=False, outputs=False)
    finally:
        holder.kill()
        holder.wait()


def test_a_killed_run_leaves_no_stale_lock(tmp_path):
    holder = _holder(tmp_path)
    holder.kill()
    holder.wait()
    with folder_lock(tmp_path) as lock:
        assert lock.fd is not None


def _writer(tmp_path, locks: RunLocks, **kwargs):
    args = [sys.executable, "-m", "autograder.gradebook.writer", f"sqlite:///{tmp_path / 'gradebook.db'}",
            str(ROOT), "ch04_attention", "--parent", str(os.getpid())]
    for lock in locks.held():
        args += ["--lock-fd", str(lock.fd), "--lock", str(lock.path)]
    return subprocess.run(args, pass_fds=locks.fds, capture_output=True, text=True, timeout=120, **kwargs)


@pytest.mark.parametrize("newer", ["output folder", "gradebook"])
def test_the_writer_never_writes_after_a_newer_run_started(tmp_path, newer):
    db_url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with RunLocks(tmp_path, db_url) as locks:
        folder, gradebook = locks.locks
        taken = folder if newer == "output folder" else gradebook
        os.unlink(taken.path)                       # the lock file was removed and a newer run took a new one
        with RunLocks(tmp_path) if newer == "output folder" else RunLocks(tmp_path / "other", db_url):
            proc = _writer(tmp_path, locks, input="[]")
    assert proc.returncode == GONE and "nothing written" in proc.stderr
    assert not (tmp_path / "gradebook.db").exists()


def test_the_writer_writes_nothing_when_the_run_sends_no_scores(tmp_path):
    with RunLocks(tmp_path) as locks:
        proc = _writer(tmp_path, locks, input="")
    assert proc.returncode == GONE and "sent no scores" in proc.stderr


def test_the_writer_writes_for_its_live_run(tmp_path):
    db = tmp_path / "gradebook.db"
    with RunLocks(tmp_path, f"sqlite:///{db}") as locks:
        assert len(locks.fds) == 2
        proc = _writer(tmp_path, locks, input="[]")
    assert proc.returncode == 0, proc.stderr
    assert db.stat().st_size > 0


ORPHAN = """
import os, sys, time
from autograder.lifecycle import die_with_parent
parent = os.getpid()
if os.fork() == 0:
    die_with_parent(parent)
    time.sleep(60)
    os._exit(0)
print(os.getpid(), flush=True)
time.sleep(60)
"""


def _state(pid: int) -> str:
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return "gone"
    return stat[stat.rindex(")") + 2:].split()[0]


def _children(pid: int) -> list[int]:
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = open(f"/proc/{entry}/stat").read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == pid and fields[0] not in "ZX":
            found.append(int(entry))
    return found


def _wait_for(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    return condition()


def test_a_child_dies_with_its_parent():
    proc = subprocess.Popen([sys.executable, "-c", ORPHAN], stdout=subprocess.PIPE, text=True)
    parent = int(proc.stdout.readline())
    assert _wait_for(lambda: _children(parent), 10)
    (child,) = _children(parent)
    proc.kill()
    proc.wait()
    assert _wait_for(lambda: _state(child) in ("Z", "X", "gone"), 5)


def test_a_child_whose_parent_already_died_exits():
    code = ("import os\nfrom autograder.lifecycle import die_with_parent\n"
            "die_with_parent(os.getppid() + 1000000)\nprint('survived')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL and "survived" not in proc.stdout


def test_a_stop_signal_waits_for_the_record_being_written():
    written = []
    with pytest.raises(Stop) as stop:
        with stop_on_signals():
            with critical():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)                     # the handler has run by now, and held the signal
                written.append("record")
    assert written == ["record"] and stop.value.exit_code == 143
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_stop_signal_raises_once():
    raised = 0
    with stop_on_signals():
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
        except Stop:
            raised += 1
        os.kill(os.getpid(), signal.SIGINT)        # while the run cleans up: ignored
        time.sleep(0.05)
    assert raised == 1


LEAKY_OWNER = """
import os, time
from autograder.sandbox.forkclient import ForkServer
server = ForkServer()
if os.fork() == 0:                  # a process that kept a copy of the control socket by mistake
    time.sleep(60)
    os._exit(0)
time.sleep(60)
"""


def test_the_fork_server_dies_with_its_grader_even_if_its_socket_leaked():
    from run_tree import TreeRun, cmdline
    run = TreeRun([sys.executable, "-c", LEAKY_OWNER])
    run.wait_until(lambda: len(run.processes()) >= 3, timeout=60)
    (server,) = [p for p in run.processes() if "autograder.sandbox.forkserver" in cmdline(p)]
    leak = [p for p in run.processes() if p not in (run.pid, server)]
    run.signal(signal.SIGKILL)
    try:
        assert _wait_for(lambda: _state(server) in ("Z", "X", "gone"), 5)
    finally:
        for pid in leak:                 # ours: below our own launcher
            os.kill(pid, signal.SIGKILL)
        run.end(within=10)


def _nap(item: str) -> str:
    time.sleep(0 if item == "fast" else 60)
    return item


def test_a_stopped_pool_does_not_wait_for_submissions_in_progress():
    from autograder.run.local_pool import run_pool

    def finish(result):
        raise Stop(signal.SIGTERM)                  # the signal arrives as the first record is written
    start = time.monotonic()
    with pytest.raises(Stop):
        run_pool(_nap, ["fast", "slow"], finish, lambda item: item, workers=2)
    assert time.monotonic() - start < 30, "the pool waited for the slow submission"


def test_a_command_ends_at_once_with_its_output_flushed_and_its_exit_handlers_run(tmp_path):
    """``exit_now`` (the end of ``python -m autograder`` and of the gradebook writer) skips the interpreter's
    tear-down, but not what a command owes: buffered output reaches the pipe, atexit handlers run (the fork
    server is hung up there), and the exit code is the command's."""
    code = ("import atexit, sys\n"
            "from autograder.lifecycle import exit_now\n"
            "atexit.register(lambda: print('handler ran', flush=True))\n"
            "sys.stdout.write('buffered line')\n"
            "sys.stderr.write('buffered error')\n"
            "exit_now(3)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 3
    for given, status in (("None", 0), ("'stopped'", 1)):             # as sys.exit(given) would end
        ended = subprocess.run([sys.executable, "-c", f"from autograder.lifecycle import exit_now\nexit_now({given})"],
                               capture_output=True, timeout=60)
        assert ended.returncode == status
    assert done.stdout.startswith("buffered line") and "handler ran" in done.stdout
    assert done.stderr == "buffered error"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_command_whose_output_could_not_be_written_does_not_end_with_success():
    """Output sent to a file on a full disk (``grade > log.txt``) fails when it is flushed at the end:
    the interpreter's own exit then said so and ended with status 120; ``exit_now`` must not turn that
    into a silent success, with the summary lost."""
    code = ("from autograder.lifecycle import exit_now\n"
            "print('graded 12, skipped 0 already complete')\n"
            "exit_now(0)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}      # stdout buffered, as for a file
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-c", code], stdout=full, stderr=subprocess.PIPE, text=True,
                              timeout=60, env=env, cwd=ROOT)
    assert done.returncode == 120
    assert "could not be written" in done.stderr and "No space left" in done.stderr


def test_a_second_watch_is_told_it_is_a_watch_that_holds_the_folder(tmp_path):
    """A watch's lock says it is a watch: a second one is not told of "another grading run"."""
    from autograder.gradebook.runlock import RunLock
    with RunLock(tmp_path / "lock", "grading/.watch/", kind="watch serving feedback on submit"):
        with pytest.raises(RunLocked, match=rf"^another watch serving feedback on submit \(pid {os.getpid()}, "):
            RunLock(tmp_path / "lock", "grading/.watch/").acquire()
    with RunLock(tmp_path / "lock2", "the output folder"):
        with pytest.raises(RunLocked, match=r"^another grading run \(pid"):
            RunLock(tmp_path / "lock2", "the output folder").acquire()


def test_a_stop_that_arrives_while_a_class_is_made_is_still_the_stop():
    """Ctrl-C during a deferred import of a dataclass reached the CLI as RuntimeError ('Error calling
    __set_name__'), so grade said 'error:' and ended 1 instead of 130 (Python 3.11 wraps it)."""
    import signal as signals

    class Field:
        def __set_name__(self, owner, name):
            raise Stop(signals.SIGINT)

    with pytest.raises(Stop) as stopped:
        with stop_on_signals():
            type("Lateness", (), {"penalties": Field()})
    assert stopped.value.signum == signals.SIGINT
    with pytest.raises(RuntimeError, match="a real error"):
        with stop_on_signals():
            raise RuntimeError("a real error")
