"""The adversarial corpus (tests/adversarial/), graded as one batch; each attack's outcome is checked."""
import hashlib
import importlib
import shutil
import ctypes
import os
import time
import socket
import tempfile
import threading
from pathlib import Path

import pytest

import corpora
from autograder.run.batch import grade_batch
from nbgrader_fast import run_nbgrader
from autograder.sandbox import cgroups
from autograder.samples.synthetic import write_submission
from batch_helpers import gradebook_in, make_class
from sandbox_helpers import RIGHT_MASK, WRONG_MASK, anothers_worker_cgroup, lasting_processes, probe


EXPECTED = {e.name: e for e in corpora.load("adversarial")}
CORPUS = sorted(EXPECTED)
LIMITS = {"cell_seconds": 3.0, "call_seconds": 3.0, "total_seconds": 60.0}


def _load(name):
    return importlib.import_module(f"adversarial.{name}")


SHM_KEY = 0x41475631
_libc = ctypes.CDLL(None, use_errno=True)


class _HostServices:
    """What the probes for host objects try to reach: a named and an abstract Unix socket
    listener, and a System V shared memory segment."""

    def __init__(self):
        self.folder = tempfile.mkdtemp(prefix="agadv-", dir="/run" if os.access("/run", os.W_OK) else None)
        self.path, self.abstract = os.path.join(self.folder, "host.sock"), f"agadv-{os.getpid()}"
        self.listeners = []
        for address in (self.path, "\0" + self.abstract):
            for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
                sock = socket.socket(socket.AF_UNIX, kind)
                sock.bind(address if kind == socket.SOCK_STREAM else address + ".dgram")
                if kind == socket.SOCK_STREAM:
                    sock.listen(8)
                sock.setblocking(False)
                self.listeners.append(sock)
        os.chmod(self.folder, 0o755)                             # only the sandbox may stop the probes
        os.chmod(self.path, 0o777)
        self.shm = _libc.shmget(SHM_KEY, 4096, 0o1666)        # IPC_CREAT | 0666

    def substitute(self, code: str) -> str:
        return code.replace("UNIX_PATH", repr(self.path)).replace("ABSTRACT_NAME", repr(self.abstract)) \
            .replace("SHM_KEY", str(SHM_KEY))

    def contacts(self) -> list:
        found = []
        for sock in self.listeners:
            try:
                found.append(sock.accept() if sock.type == socket.SOCK_STREAM else sock.recv(16))
            except OSError:
                pass
        return found

    def close(self) -> None:
        for sock in self.listeners:
            sock.close()
        if self.shm >= 0:
            _libc.shmctl(self.shm, 0, None)                     # IPC_RMID
        shutil.rmtree(self.folder, ignore_errors=True)


def _sysv_segments() -> list[str]:
    """The host's SysV shared-memory segments, less those the postgres account made: a PostgreSQL server
    that another test worker starts meanwhile makes one (a student's worker never runs as postgres)."""
    try:
        rows = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    except OSError:
        return []
    try:
        import pwd
        postgres = str(pwd.getpwnam("postgres").pw_uid)
    except KeyError:
        postgres = None
    return sorted(r for r in rows if r.split()[9] != postgres)        # column 9: the creator's uid (cuid)


class _Loopback:
    """A TCP listener and a UDP echo on 127.0.0.1: what the network probes try to reach."""

    def __init__(self):
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        self.tcp.settimeout(0.2)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.settimeout(0.2)
        self.contacts = []
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while not self.stop.is_set():
            for sock in (self.tcp, self.udp):
                try:
                    if sock is self.tcp:
                        self.contacts.append(sock.accept()[1])
                    else:
                        data, addr = sock.recvfrom(16)
                        self.contacts.append(addr)
                        sock.sendto(b"pong", addr)
                except OSError:
                    pass


def _lay_out(course: Path, net: _Loopback, host: _HostServices) -> None:
    release, source = course / "release/ch04_attention", course / "source/ch04_attention"
    subs = course / "submitted"
    write_submission(release, source, subs / "honest-wrong/ch04_attention", {"causal_mask": WRONG_MASK})
    write_submission(release, source, subs / "honest-right/ch04_attention", {"causal_mask": RIGHT_MASK})
    for name in CORPUS:
        mod, want, folder = _load(name), EXPECTED[name], subs / _student(name) / "ch04_attention"
        code = getattr(mod, "CODE", "").replace("COURSE", repr(str(course)))
        code = code.replace("TCP_PORT", str(net.tcp.getsockname()[1]))
        code = host.substitute(code.replace("UDP_PORT", str(net.udp.getsockname()[1])))
        overrides, extra = {}, {}
        if want.kind == "probe":
            overrides = {"causal_mask": probe(code)}
        elif want.kind == "cheat":
            overrides = {"causal_mask": WRONG_MASK + "\n" + code}
        elif want.kind == "disruption" and want.target == "cell":
            extra = {"ex2_causal_mask": [code]}
        elif want.kind == "disruption":
            overrides = {want.target: code}
        write_submission(release, source, folder, overrides, extra_cells=extra)
        if want.kind == "damage":
            mod.damage(folder)


def _student(name: str) -> str:
    """The student id an attack is graded under: its module name unless it sets STUDENT_ID."""
    return getattr(_load(name), "STUDENT_ID", name)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("adversarial")
    course = make_class(tmp, students=[])
    run_nbgrader(["generate_assignment", "ch04_attention", "--force", "--log-level=WARN"], course,
                 "generate_assignment")
    net, host = _Loopback(), _HostServices()
    _lay_out(course, net, host)
    guarded = {p: _digest(p) for p in (course / "nbgrader_config.py", course / "gradebook.db")}
    segments, cgroups_before = _sysv_segments(), set(cgroups.worker_dirs())
    try:
        result = grade_batch(course=course, out=tmp / "out", workers=2, limits=LIMITS, progress=False,
                             gradebook_url=gradebook_in(tmp / "out"), create_gradebook=True)   # the course's own is guarded
        net.stop.set()
        host_effects = {"contacts": host.contacts(), "new segments": sorted(set(_sysv_segments()) - set(segments))}
    finally:
        host.close()
    return {r.student_id: r for r in result.records}, net, guarded, tmp / "out", host_effects, cgroups_before


def test_corpus_is_large_and_covers_every_kind():
    kinds = [EXPECTED[n].kind for n in CORPUS]
    assert len(CORPUS) >= 40
    assert {"probe", "cheat", "disruption", "damage"} == set(kinds)


@pytest.mark.parametrize("name", CORPUS)
def test_attack_outcome(corpus, name):
    records, _, _, out, _, _ = corpus
    mod, record = _load(name), records[_student(name)]
    wrong, right = records["honest-wrong"].total, records["honest-right"].total
    assert right == record.max_total == 28 and wrong < right
    total, want = record.total, EXPECTED[name].score
    assert 0 <= total <= record.max_total
    expected = {"honest_wrong": total == wrong, "at_most_honest_wrong": total <= wrong,
                "honest_right": total == right, "at_most_honest_right": total <= right,
                "below_honest_right": total < right, "any": True}[want]
    assert expected, (name, want, total, wrong, right, record.integrity)
    if EXPECTED[name].review != "any":
        assert record.needs_review is EXPECTED[name].review, (name, record.integrity)
    if hasattr(mod, "inspect"):                                   # what the attack did to the outputs
        mod.inspect(record, out)


def _lasting_worker_cgroups(before: set, seconds: float = 150.0) -> list:
    """Worker cgroups of this corpus's grading that still hold processes after ``seconds``: a process that
    escaped its worker stays. Those of another grader running at the same time (another test worker's)
    are not waited for: a cgroup that was there before the grading began, or whose every process is a
    worker of another live fork server (one that is not this process's)."""
    busy = [d for d in cgroups.worker_dirs()
            if d not in before and cgroups.members(d) and not anothers_worker_cgroup(d)]
    deadline = time.monotonic() + seconds
    while busy and time.monotonic() < deadline:
        time.sleep(0.5)
        busy = [d for d in busy if cgroups.members(d)]
    return busy


def test_nothing_escaped_or_survived(corpus):
    _, net, guarded, _, host_effects, cgroups_before = corpus
    assert net.contacts == []
    assert host_effects == {"contacts": [], "new segments": []}
    assert all(_digest(p) == d for p, d in guarded.items())
    assert not list(Path("/tmp").glob("adversarial-*"))
    assert lasting_processes("agadvdaemon") == []
    assert _lasting_worker_cgroups(cgroups_before) == []


_SERVES = "import subprocess, time; print(subprocess.Popen(['sleep', '60']).pid, flush=True); time.sleep(60)"


def _orphan(*argv: str) -> int:
    """Start ``argv`` as an orphan (a double fork: not below this process); its first printed line."""
    import subprocess
    import sys
    starter = subprocess.Popen([sys.executable, "-c", "import subprocess, sys; subprocess.Popen(sys.argv[1:])", *argv],
                               stdout=subprocess.PIPE, text=True)
    with starter.stdout:
        line = starter.stdout.readline()
    starter.wait(timeout=30)
    return int(line)


def test_the_wait_for_lasting_workers_skips_another_graders_alone(tmp_path):
    """_lasting_worker_cgroups waits for a cgroup whose process is below this test process, or below no live
    fork server (orphaned); never for one whose every process is below another grader's live fork server."""
    import signal
    import subprocess
    import sys
    ours = subprocess.Popen(["sleep", "60"])
    theirs = _orphan(sys.executable, "-c", _SERVES, "autograder.sandbox.forkserver")     # a fork server's worker
    orphaned = _orphan("sh", "-c", "echo $$; exec sleep 60")
    try:
        groups = {}
        for name, pid in (("ours", ours.pid), ("theirs", theirs), ("orphaned", orphaned), ("empty", None)):
            groups[name] = tmp_path / name
            groups[name].mkdir()
            (groups[name] / "cgroup.procs").write_text(f"{pid}\n" if pid else "")
        assert {name: anothers_worker_cgroup(group) for name, group in groups.items()} == \
            {"ours": False, "theirs": True, "orphaned": False, "empty": False}
    finally:
        ours.kill()
        ours.wait()
        for pid in (theirs, orphaned):
            os.kill(pid, signal.SIGKILL)
