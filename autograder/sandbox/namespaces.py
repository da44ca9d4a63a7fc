"""Namespaces and private mounts for a worker (each step reports what it did or why not).

``enter`` gives the worker its own network, System V IPC and mount namespaces (a grader that is
not root first enters a user namespace of its own, ``enter_user_namespace``). A root fork server
starts each worker as the init of a new PID namespace (``PidNamespaces``); a worker of a grader that
is not root makes its own in its user namespace, with one more fork (``enter_pid_namespace``). Either
way, when the worker ends, the kernel ends every process the student started. In the
mount namespace ``private_tmp`` mounts one size-capped tmpfs over ``/tmp`` that holds the
working folder and backs ``/dev/shm``, so nothing the student writes reaches the disk or other
processes, and one submission cannot fill the disk. ``reveal`` makes folders an unprivileged
uid could not traverse (Python under ``/root``) reachable: a tmpfs covers the closed folder and
only the paths Python needs are bound back, read-only. ``hide`` covers this project's own folders
(the reference engine, the grader, the course files) with an empty read-only tmpfs, wherever they
are installed.
"""
from __future__ import annotations

import ctypes
import os
import select
import signal

from .status import LayerStatus, State, applied, missing

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWPID = 0x00020000, 0x08000000, 0x40000000, 0x20000000
CLONE_NEWUSER = 0x10000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG = 1
NAMESPACES = {"network namespace": CLONE_NEWNET, "IPC namespace": CLONE_NEWIPC, "mount namespace": CLONE_NEWNS}
WORKDIR = "/tmp/work"
_libc = ctypes.CDLL(None, use_errno=True)


def enter(mark=None) -> dict[str, LayerStatus]:
    """Unshare each namespace in turn; layer -> status. The PID namespace came with the fork from a root fork
    server; a worker that is not root (in its own user namespace) enters one first, with a fork of its own.
    ``mark(name)``, when given, is called as each is done (for the layer-cost benchmark)."""
    status = {"PID namespace": enter_pid_namespace() if os.geteuid() != 0 else pid_namespace_of_fork_server()}
    if mark:
        mark("PID namespace")
    for name, flag in NAMESPACES.items():
        if not hasattr(_libc, "unshare"):
            status[name] = missing("no unshare() on this system")
        elif _libc.unshare(flag) != 0:
            status[name] = missing(f"unshare failed ({os.strerror(ctypes.get_errno())})")
        else:
            status[name] = applied()
        if mark:
            mark(name)
    if status["mount namespace"].state is State.APPLIED:
        status["mount namespace"] = _private_propagation()
        if mark:
            mark("mount propagation private")
    return status


def pid_namespace_of_fork_server() -> LayerStatus:
    """A root fork server forked this worker into a new PID namespace (``PidNamespaces``), or could not."""
    return applied("the worker is its init") if os.getpid() == 1 else missing("the fork server could not create one")


def enter_pid_namespace() -> LayerStatus:
    """For a grader that is not root, in the worker's own user namespace: a new PID namespace, entered with
    one more fork. This process returns as the namespace's init (pid 1): when it ends, the kernel ends every
    process in it, also one that left its session. Its parent stays behind as its holder, the pid the grader
    knows: it holds no descriptor of the worker's, waits for it and leaves with its status; when the holder
    is killed (the grader ends the worker) or the fork server dies, the init gets SIGKILL."""
    if not hasattr(_libc, "unshare") or _libc.unshare(CLONE_NEWPID) != 0:
        return missing(f"unshare failed ({os.strerror(ctypes.get_errno())})")
    read, write = os.pipe()
    fork_server = os.getppid()
    pid = os.fork()
    if pid:
        _hold(pid, write, fork_server)                # never returns
    os.close(write)
    _die_with_parent(read)
    return applied("the worker is its init, in its user namespace")


def _die_with_parent(read: int) -> None:
    """SIGKILL when the holder ends; the holder ended already when its end of the pipe is closed."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if select.select([read], [], [], 0)[0]:
        os._exit(1)
    os.close(read)


def _hold(child: int, keep: int, fork_server: int) -> None:
    """The holder: dies with the fork server, holds nothing of the worker's, leaves with its status."""
    try:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != fork_server:
            os._exit(1)
        os.closerange(0, keep)
        os.closerange(keep + 1, 1 << 16)
        code = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
        os._exit(code if code >= 0 else 128 - code)
    finally:
        os._exit(1)


def enter_user_namespace() -> LayerStatus:
    """For a process that is not root: a user namespace mapping its uid and gid to themselves, so
    it may create the other namespaces and mount its own tmpfs, with no power outside them."""
    uid, gid = os.getuid(), os.getgid()
    if not hasattr(_libc, "unshare"):
        return missing("no unshare() on this system")
    if _libc.unshare(CLONE_NEWUSER) != 0:
        return missing(f"unshare failed ({os.strerror(ctypes.get_errno())})")
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    except OSError as exc:
        return missing(f"could not map the user ({exc})")
    return applied()


def _private_propagation() -> LayerStatus:
    """No mount made here may propagate back to the host (on systemd hosts / is shared)."""
    try:
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
    except OSError as exc:
        return missing(str(exc))
    return applied()


def host_pid() -> int:
    """This process's pid as the grader sees it (inside a new PID namespace, getpid() is 1)."""
    try:
        return int(os.readlink("/proc/self"))
    except (OSError, ValueError):
        return os.getpid()


class PidNamespaces:
    """In the fork server: each ``fork()`` starts a new PID namespace (the child is its init); then
    the fork server returns to its own namespace for the next. Needs root; else a plain fork."""

    def __init__(self):
        self.own = None
        if os.geteuid() == 0 and hasattr(_libc, "setns"):
            try:
                self.own = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                self.own = None

    def fork(self) -> int:
        fresh = self.own is not None and _libc.unshare(CLONE_NEWPID) == 0
        pid = -1
        try:
            pid = os.fork()
        finally:
            if fresh and pid != 0:                    # the fork server (also when fork failed) goes back
                self._back()
        return pid

    def _back(self) -> None:
        if _libc.setns(self.own, CLONE_NEWPID) != 0:
            os.close(self.own)                        # cannot go back: no more PID namespaces
            self.own = None


def private_tmp(size_bytes: int, uid: int | None, keep=()) -> str:
    """One tmpfs of ``size_bytes`` over /tmp: the working folder (returned) and /dev/shm's backing.
    Paths in ``keep`` that lie under /tmp (a virtual environment there, say) are bound back read-only."""
    inside = [p for p in keep if p.startswith("/tmp/")]
    _cover("/tmp", inside, MS_NOSUID | MS_NODEV | MS_NOEXEC, f"size={size_bytes},mode=0711")
    os.mkdir(WORKDIR, 0o700)
    os.mkdir("/tmp/shm", 0o700)
    if uid is not None:
        os.chown(WORKDIR, uid, uid)
        os.chown("/tmp/shm", uid, uid)
    if os.path.isdir("/dev/shm"):
        _mount("/tmp/shm", "/dev/shm", None, MS_BIND)
    return WORKDIR


def reveal(paths) -> list[str]:
    """Make ``paths`` reachable for any uid: cover each closed ancestor with a tmpfs and bind the
    paths below it back, read-only. Returns the folders covered."""
    groups: dict[str, list[str]] = {}
    for path in paths:
        closed = _closed_ancestor(path)
        if closed:
            groups.setdefault(closed, []).append(path)
    for closed, inside in groups.items():
        _cover(closed, inside, MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    return sorted(groups)


def hide(folders) -> list[str]:
    """Cover each folder with an empty, read-only tmpfs, in this mount namespace only (student code
    cannot mount: seccomp denies it and its capabilities are gone). A folder already out of sight
    (under a covered /tmp or /root) is skipped. One tmpfs, bound over the others (half the cost of
    one each; its read-only superblock refuses writes through every binding). Returns the folders
    covered."""
    covered = []
    for folder in folders:
        if not os.path.isdir(folder) or os.path.islink(folder):
            continue
        if covered:
            _mount(covered[0], folder, None, MS_BIND)
        else:
            _mount("tmpfs", folder, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                   "size=4k,nr_inodes=1,mode=0555")
        covered.append(folder)
    return covered


def _closed_ancestor(path: str) -> str | None:
    """The highest folder above ``path`` that others may not traverse, if any."""
    current = "/"
    for part in path.strip("/").split("/")[:-1]:
        current = os.path.join(current, part)
        try:
            if not os.stat(current).st_mode & 0o001:
                return current
        except OSError:
            return None
    return None


def _cover(folder: str, keep: list[str], flags: int, options: str) -> None:
    """Mount a fresh tmpfs on ``folder``, then bind each path of ``keep`` (below it) back, read-only."""
    fds = {path: os.open(path, os.O_PATH | os.O_CLOEXEC) for path in keep if os.path.exists(path)}
    try:
        _mount("tmpfs", folder, "tmpfs", flags, options)
        for path, fd in fds.items():
            os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
            if os.path.isdir(f"/proc/self/fd/{fd}"):
                os.makedirs(path, mode=0o755, exist_ok=True)
            else:
                open(path, "ab").close()
            _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
            _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    finally:
        for fd in fds.values():
            os.close(fd)


def _mount(source, target, fstype, flags, data=None) -> None:
    args = [None if a is None else a.encode() for a in (source, target, fstype, data)]
    if _libc.mount(args[0], args[1], args[2], ctypes.c_ulong(flags), args[3]) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {target}: {os.strerror(err)}")
