"""The isolation layers themselves: what is readable, how each layer degrades, what a worker reports,
and that the fork server's reaper runs however it is stopped."""
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

import pytest

from autograder.sandbox import layers, namespaces, rootfs, seccomp
from autograder.sandbox.limits import Limits
from autograder.sandbox.forkclient import ForkServer
from autograder.sandbox.handle import WorkerHandle
from autograder.sandbox.status import SANDBOX_LAYERS, LayerStatus, State, missing

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="the namespaces need root")


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def test_read_paths_cover_python_but_not_all_of_usr():
    paths = layers.read_paths()
    assert any(_within(os.path.dirname(os.__file__), p) for p in paths), "the standard library"
    assert any(_within(os.path.dirname(__import__("numpy").__file__), p) for p in paths), "numpy"
    for secret in ("/usr/local/share", "/usr/local/share/nbgrader/exchange", "/usr/share/doc", "/usr/bin",
                   "/etc/passwd", os.path.expanduser("~")):
        assert not any(_within(secret, p) for p in paths), secret


def test_seccomp_missing_degrades_to_a_message(monkeypatch):
    monkeypatch.setattr(seccomp, "_prepared", None)
    monkeypatch.setattr(seccomp, "available", lambda: missing("pyseccomp or libseccomp not installed (test)"))
    assert seccomp.prepare() is None
    assert str(seccomp.load()).startswith("missing: pyseccomp")


def _export_fails(flt):
    raise OSError("seccomp_export_bpf failed (test)")


SECCOMP_PROBES = {
    "execve": "os.execv('/bin/true', ['true'])",
    "unix socket": "socket.socket(socket.AF_UNIX)",
    "unix datagram pair": "socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)",
    "unix datagram pair, high bits in the family": "sv = (ctypes.c_int * 2)()\n_check(libc.syscall("
        "53 if platform.machine() == 'x86_64' else 199, ctypes.c_ulong((1 << 32) | socket.AF_UNIX), "
        "ctypes.c_ulong(socket.SOCK_DGRAM), ctypes.c_ulong(0), sv))",
    "netlink socket": "socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)",
    "unix socket, high bits in the family": "_check(libc.syscall(41 if platform.machine() == 'x86_64' else 198, "
        "ctypes.c_ulong((1 << 32) | socket.AF_UNIX), ctypes.c_ulong(socket.SOCK_STREAM), ctypes.c_ulong(0)))",
    "vsock": "socket.socket(40, socket.SOCK_STREAM)",
    "keyring": "_check(libc.syscall(250 if platform.machine() == 'x86_64' else 219, 0, -4, 0))",
    "shared memory": "_check(libc.shmget(0, 4096, 0o1600))",
    "user namespace": "_check(libc.unshare(0x10000000))",
    "inotify": "_check(libc.inotify_init1(0))",
    "inotify, the first call": "_check(libc.inotify_init())",
    "inotify watch on a descriptor made before": "_check(libc.inotify_add_watch(-1, b'/', 0xfff))",
    "fanotify": "_check(libc.fanotify_init(0, 0))",
    "dnotify": "fd = os.open('/', os.O_RDONLY)\nfcntl.fcntl(fd, 1026, 0x80000001)",   # F_NOTIFY, DN_MULTISHOT | DN_ACCESS
}
SECCOMP_ALLOWED = {
    "inet socket": "socket.socket()",
    "stream socketpair": "socket.socketpair()",
    "thread": "t = threading.Thread(target=print); t.start(); t.join()",
    "fork": "pid = os.fork()\nif pid == 0: os._exit(0)\nos.waitpid(pid, 0)",
    "fcntl": "fcntl.fcntl(0, fcntl.F_GETFL)",
}


@pytest.mark.skipif(seccomp.available().state is not State.AVAILABLE, reason="needs pyseccomp and libseccomp")
@pytest.mark.parametrize("loaded", ["compiled once", "through libseccomp"])
@pytest.mark.parametrize("name", [*SECCOMP_PROBES, *SECCOMP_ALLOWED])
def test_seccomp_filter_denies_exactly_what_it_should(name, loaded, monkeypatch):
    """The same filter, whether the fork server's compiled program is installed (the usual way) or,
    where libseccomp cannot export it, each worker loads it through libseccomp."""
    monkeypatch.setattr(seccomp, "_prepared", None)
    if loaded == "through libseccomp":
        monkeypatch.setattr(seccomp, "Compiled", _export_fails)
    assert (type(seccomp.prepare()).__name__ == "Compiled") is (loaded == "compiled once")
    code = SECCOMP_PROBES.get(name) or SECCOMP_ALLOWED[name]
    pid = os.fork()
    if pid == 0:
        result = 3
        try:
            import ctypes, fcntl, platform, socket, threading  # noqa: E401, F401
            libc = ctypes.CDLL(None, use_errno=True)

            def _check(ret):
                if ret < 0:
                    raise OSError(ctypes.get_errno(), "denied")
            seccomp.load()
            try:
                exec(code, {**globals(), **locals()})                     # noqa: S102 - our own probes
                result = 0
            except PermissionError:
                result = 1
        finally:
            os._exit(result)
    result = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    assert result == (1 if name in SECCOMP_PROBES else 0), name


def test_closed_ancestor_is_the_highest_folder_others_cannot_enter():
    base = Path(tempfile.mkdtemp())                     # in the open /tmp, unlike pytest's tmp_path
    try:
        base.chmod(0o755)
        outer = base / "home"
        inner = outer / "me" / "python" / "lib"
        inner.mkdir(parents=True)
        outer.chmod(0o700)
        assert namespaces._closed_ancestor(str(inner)) == str(outer)
        outer.chmod(0o755)
        assert namespaces._closed_ancestor(str(inner)) is None
    finally:
        shutil.rmtree(base)


@ROOT_ONLY
def test_a_worker_reports_every_layer_it_applied(server):
    handle = WorkerHandle(server, Limits())
    try:
        handle.run_cell(
            "import os\nprint(os.getpid(), os.getuid(), os.getcwd(), sorted(os.listdir('/dev/shm')))", 20)
        out, _ = handle.request({"op": "output"}, 5)
    finally:
        handle.cleanup()
    status = handle.status
    for layer in ("network namespace", "IPC namespace", "mount namespace", "PID namespace", "private /tmp",
                  "seccomp"):
        assert LayerStatus.parse(status[layer]).state is State.APPLIED, (layer, status[layer])
    assert set(status) <= set(SANDBOX_LAYERS), "one name per layer: the record's is doctor's"
    pid, uid, cwd, shm = out["stdout"].split(" ", 3)
    assert pid == "1" and int(uid) >= layers.UID_BASE and cwd == namespaces.WORKDIR and shm.strip() == "[]"


TEMP_FILES = """import os, tempfile
import numpy as np
with tempfile.NamedTemporaryFile() as t:
    m = np.memmap(t.name, dtype="float64", mode="w+", shape=(3,))
    m[:] = 2
    print(tempfile.gettempdir() == os.environ["TMPDIR"], float(m.sum()))
"""


def test_a_students_temporary_files_go_to_the_workers_own_folder(server):
    """``tempfile`` in the worker writes where TMPDIR says (the worker's own tmpfs): the fork server had already
    asked ``tempfile`` for its folder under the grader's environment (/tmp), which ``tempfile`` keeps, and a
    student's NamedTemporaryFile (a memmap's backing file) met PermissionError on /tmp."""
    handle = WorkerHandle(server, Limits())
    try:
        reply = handle.run_cell(TEMP_FILES, 20)
        out, _ = handle.request({"op": "output"}, 5)
    finally:
        handle.cleanup()
    assert reply["ok"] and out["stdout"].split() == ["True", "6.0"], (reply, out)


@ROOT_ONLY
def test_mounts_in_the_worker_never_reach_the_host():
    """On a host whose mounts are shared (systemd), a worker's mounts must not propagate back."""
    shared = tempfile.mkdtemp()
    namespaces._mount("tmpfs", shared, "tmpfs", 0, "size=1m")
    try:
        namespaces._mount(None, shared, None, 1 << 20)                    # MS_SHARED
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                assert str(namespaces.enter()["mount namespace"]) == "applied"
                os.mkdir(os.path.join(shared, "inner"))
                namespaces._mount("tmpfs", os.path.join(shared, "inner"), "tmpfs", 0, "size=1m")
                code = 0
            finally:
                os._exit(code)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
        assert not os.path.ismount(os.path.join(shared, "inner"))
    finally:
        namespaces._libc.umount2(shared.encode(), 2)                      # MNT_DETACH
        shutil.rmtree(shared, ignore_errors=True)


def test_fork_server_reaper_runs_when_it_is_terminated():
    server = ForkServer()
    handle = WorkerHandle(server, Limits())
    try:
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=30) == 0
        assert not server.root.exists(), "the reaper removed every worker's folder"
        deadline = time.monotonic() + 10
        while _alive(handle.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(handle.pid)
    finally:
        handle.cleanup()
        server.close()


def test_the_fork_server_removes_its_folder_when_its_grader_dies(tmp_path):
    """A grader that dies (a grading process ended by its pool, `watch` killed) closes the fork server's socket
    and sends it SIGTERM (its death signal) at the same moment: a signal during the reaper's clean-up cut it
    short and left the sandbox folder in the temporary folder (issue 38). Here the socket closes, then SIGTERM
    comes again and again while the reaper removes a folder slow to remove."""
    server = ForkServer()
    try:
        slow = server.root / "slow"
        slow.mkdir()
        for i in range(5_000):
            (slow / str(i)).touch()
        server.control.close()
        time.sleep(0.05)
        for _ in range(40):
            if server.proc.poll() is not None:
                break
            server.proc.send_signal(signal.SIGTERM)
            time.sleep(0.01)
        server.proc.wait(timeout=60)
        assert not server.root.exists(), "the reaper was cut short"
    finally:
        server.proc.kill()
        shutil.rmtree(server.root, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except OSError:
        return False


@ROOT_ONLY
def test_without_a_private_tmpfs_the_worker_keeps_its_host_folder(monkeypatch, tmp_path):
    """A mount namespace where neither its own root nor the tmpfs can be mounted: the host folder is used (and
    owned by the worker's uid when it takes one), and the status says what is missing."""
    def refuse(*args, **kwargs):
        raise OSError(1, "mount /tmp: refused for the test")
    monkeypatch.setattr(namespaces, "private_tmp", refuse)
    monkeypatch.setattr(rootfs, "own_root", refuse)
    host = tmp_path / "w"
    host.mkdir()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            status = {}
            workdir, own_uid = layers._isolate_files(status, str(host), Limits(), 1_234_567, True)
            os.write(write, f"{workdir}|{own_uid}|{status['private /tmp']}|{status['own root']}".encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    workdir, own_uid, private, own_root = os.read(read, 4096).decode().split("|")
    assert workdir == str(host) and private.startswith("missing: ") and "refused for the test" in private
    assert own_root.startswith("missing: ") and "host's folders stay in view" in own_root
    assert host.stat().st_uid == (1_234_567 if own_uid == "True" else 0)


def _userns_allowed() -> bool:
    try:
        return int(Path("/proc/sys/user/max_user_namespaces").read_text()) > 0
    except (OSError, ValueError):
        return False


@ROOT_ONLY
@pytest.mark.skipif(not _userns_allowed(), reason="no unprivileged user namespaces on this kernel")
def test_a_grader_that_is_not_root_still_gets_namespaces_and_its_tmpfs(tmp_path):
    """Run as nobody (a forked child drops root): a user namespace of its own lets it create the
    network, IPC and mount namespaces and the private tmpfs; its namespace capabilities are dropped."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            namespaces._libc.prctl(4, 1, 0, 0, 0)           # PR_SET_DUMPABLE, as a normal login has it
            status = {}
            workdir, own_uid = layers._isolate_files(status, str(tmp_path), Limits(disk_bytes=8 << 20), 1, False)
            with open(os.path.join(workdir, "x"), "w") as f:
                f.write("written")
            status["uid"] = layers._drop_namespace_capabilities(status)
            caps = [line for line in open("/proc/self/status") if line.startswith("CapEff")][0].split()[1]
            shown = {name: str(layer) for name, layer in status.items()}
            os.write(write, repr((workdir, own_uid, sorted(os.listdir("/tmp")), shown, caps)).encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    workdir, own_uid, tmp_listing, status, caps = eval(os.read(read, 65536).decode())   # noqa: S307 - ours
    for layer in ("user namespace", "network namespace", "IPC namespace", "mount namespace"):
        assert status[layer] == "applied", (layer, status)
    assert status["private /tmp"].startswith("applied") and workdir == namespaces.WORKDIR
    python_in_tmp = {q.split("/")[2] for q in layers.read_paths() if q.startswith("/tmp/")}   # bound back
    assert tmp_listing == sorted({"shm", "work"} | python_in_tmp) and not own_uid
    assert int(caps, 16) == 0 and "dropped" in status["uid"]


def test_a_worker_starts_as_a_fresh_kernel_despite_the_warm_up(server):
    """The fork server runs one cell of its own before forking (``warm_shell``); a worker still starts
    as nbgrader's fresh kernel: nothing imported or defined, no output history, no execution count."""
    handle = WorkerHandle(server, Limits())
    try:
        reply = handle.run_cell("np.zeros(1)", 20)
        names = handle.run_cell(
            "import sys\nprint(sorted(n for n in dir() if not n.startswith('_') and n not in "
            "('In', 'Out', 'exit', 'quit', 'get_ipython', 'open', 'sys')), get_ipython().execution_count, len(Out))", 20)
        out, _ = handle.request({"op": "output"}, 5)
    finally:
        handle.cleanup()
    assert not reply["ok"] and reply["error"]["type"] == "NameError", reply
    assert names["ok"] and out["stdout"].splitlines()[-1].split() == ["[]", "1", "0"], out


def test_doctor_says_what_each_missing_layer_costs():
    """Every layer a worker can lack has one plain sentence of what its absence costs, printed under it, and
    the summary names each missing layer; a layer on costs nothing."""
    from autograder.sandbox import doctor
    lacking = doctor.report({name: missing("for the test") for name in SANDBOX_LAYERS}, None)
    for line in lacking:
        assert bool(line.cost) is (line.layer not in ("session", *doctor.GRADER_SIDE)), line
    text = doctor.render(lacking)
    assert text.count("without it: ") == len([line for line in lacking if line.cost])
    assert text.splitlines()[-1].startswith(f"This deployment lacks {text.count('without it: ')} layers")
    on = doctor.report({name: LayerStatus(State.AVAILABLE) for name in SANDBOX_LAYERS}, None)
    assert not any(line.cost for line in on) and doctor.summary(on).startswith("Every layer is on")


def test_doctor_believes_the_worker_over_what_the_machine_offers():
    """What a worker started here got decides: an offered layer it did not get is missing, with its cost."""
    from autograder.sandbox import doctor
    offered = {"PID namespace": LayerStatus(State.AVAILABLE), "own root": LayerStatus(State.AVAILABLE),
               "wall-clock limits": LayerStatus(State.AVAILABLE)}
    got = {"PID namespace": missing("unshare failed (Operation not permitted)")}
    lines = {line.layer: line for line in doctor.report(offered, got)}
    assert str(lines["PID namespace"].status) == "missing: unshare failed (Operation not permitted)"
    assert lines["own root"].status.state is State.MISSING and lines["own root"].cost
    assert lines["wall-clock limits"].status.state is State.AVAILABLE and not lines["wall-clock limits"].cost


@ROOT_ONLY
def test_an_old_root_that_stays_in_view_stops_the_worker(tmp_path):
    """Past pivot_root there is no host's tree to go back to: where the old root cannot be detached the worker
    must not start (RuntimeError), never fall back and run with the whole old root above its own."""
    class Refusing:
        def __init__(self, real):
            self.real = real

        def __getattr__(self, name):
            return getattr(self.real, name)

        def umount2(self, target, flags):
            return -1 if target == b"." else self.real.umount2(target, flags)
    host = tempfile.mkdtemp()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            namespaces.enter()
            rootfs._libc = Refusing(rootfs._libc)
            status = {}
            try:
                layers._own_root(status, host, Limits(disk_bytes=8 << 20), lambda name: None)
                outcome = f"started: {status}"
            except RuntimeError as exc:
                outcome = f"refused: {exc}"
            os.write(write, outcome.encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    outcome = os.read(read, 4096).decode()
    os.rmdir(host)
    assert outcome.startswith("refused: the old root could not be detached"), outcome


@ROOT_ONLY
@pytest.mark.skipif(not _userns_allowed(), reason="no unprivileged user namespaces on this kernel")
def test_where_its_own_proc_is_refused_the_worker_says_it_has_the_hosts():
    """Without a PID namespace of its own (or in a container whose /proc is partly covered) the kernel refuses a
    fresh /proc: the worker's root then binds the host's, and its status says so (doctor shows it)."""
    host = tempfile.mkdtemp()
    os.chown(host, 65534, 65534)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            namespaces._libc.prctl(4, 1, 0, 0, 0)                  # PR_SET_DUMPABLE, as a normal login has it
            assert str(namespaces.enter_user_namespace()) == "applied"
            assert namespaces._libc.unshare(namespaces.CLONE_NEWNS) == 0 and str(namespaces._private_propagation()) == "applied"
            status = {}
            workdir = layers._own_root(status, host, Limits(disk_bytes=8 << 20), lambda name: None)
            os.write(write, f"{workdir}|{status['own root']}|{len(open('/proc/self/status').read()) > 0}".encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    workdir, own_root, readable = os.read(read, 4096).decode().split("|")
    os.rmdir(host)
    assert workdir == namespaces.WORKDIR and readable == "True", (workdir, own_root)
    assert own_root.startswith("applied (") and "the host's /proc (its own: " in own_root, own_root
