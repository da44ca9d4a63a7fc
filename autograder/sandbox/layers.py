"""Isolation layers applied in a freshly forked worker, each detected at run time.

Order matters and is enforced by ``apply_all``: new session, cgroup (as root), network, IPC,
mount and PID namespaces (as root), a private size-capped /tmp and /dev/shm, Python made
reachable for an unprivileged uid, environment, working directory, rlimits, Landlock, dropping
root for a uid of the worker's own, then the seccomp filter. A layer the machine lacks is
reported as missing and the others still apply.
"""
from __future__ import annotations

import ctypes
import os
import resource
import signal
import struct
import tempfile
from pathlib import Path

from . import cgroups, landlock, namespaces, rootfs, seccomp
from .allowed import (HIDDEN_PACKAGES, SYSTEM_READ, _is_hidden, _without, hidden_dirs, read_paths,  # noqa: F401
                      root_paths)
from .limits import Limits
from .status import LayerStatus, State, applied, available, missing

PR_SET_PDEATHSIG = 1
UID_BASE = 1_000_000                # sandbox uids: UID_BASE + worker pid, unique among live workers
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS")
_libc = ctypes.CDLL(None, use_errno=True)


def detect() -> dict[str, LayerStatus]:
    """Layer -> available, or why it is missing: what this machine offers a worker of this account, seen from
    outside (``doctor`` asks a worker too: ``doctor.report``)."""
    root = os.geteuid() == 0
    abi = landlock.abi_version()
    unshare = available() if root and hasattr(_libc, "unshare") else missing("needs root (CAP_SYS_ADMIN)")
    mounts = unshare if root else _userns()
    return {
        "session": available(), "wall-clock limits": available(), "rlimits": available(),
        "uid": _locked(root, unshare),
        "BLAS threads": available(), "working folder": available(), "environment": available(),
        "landlock": available(f"ABI {abi}") if abi else missing("kernel without Landlock"),
        "this package hidden": _hidden_by_mount(mounts),
        "seccomp": seccomp.available(),
        "user namespace": LayerStatus(State.NOT_NEEDED, "root") if root else _userns(),
        **{name: mounts for name in namespaces.NAMESPACES},
        "own root": mounts,
        "PID namespace": mounts,
        "private /tmp": mounts,
        "python for any uid": unshare if root else LayerStatus(State.NOT_NEEDED, "not root: the grader's own uid "
                                                                                "runs Python"),
        "cgroup": available(cgroups.available()) if cgroups.available() else
            missing("needs root and writable pids+memory controllers"),
    }


def _locked(root: bool, unshare: LayerStatus) -> LayerStatus:
    """Whether the worker's rlimits are locked: it drops root for a uid of its own, or its capabilities; a
    grader that is not root keeps its uid, and the hard limits it sets cannot be raised without root."""
    if not root:
        return LayerStatus(State.KEPT, "not root: the hard limits cannot be raised without root")
    own = python_world_readable() or unshare.state is State.AVAILABLE
    return available("sandbox uid" if own else "capabilities dropped")


def _hidden_by_mount(mounts: LayerStatus) -> LayerStatus:
    if mounts.state is State.AVAILABLE:
        return mounts
    return LayerStatus(mounts.state, f"{mounts.detail}; solutions, autograder and the course files are hidden "
                       "only by Landlock's allowlist (install into a virtual environment outside /usr)")


def _userns() -> LayerStatus:
    try:
        allowed = int(Path("/proc/sys/user/max_user_namespaces").read_text()) > 0
    except (OSError, ValueError):
        allowed = False
    return available("in a user namespace") if allowed and hasattr(_libc, "unshare") else \
        missing("no unprivileged user namespaces here")


def thread_env() -> dict[str, str]:
    return {v: "1" for v in THREAD_VARS}


def sandbox_env(workdir: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8",
            "MPLBACKEND": "Agg", "MPLCONFIGDIR": workdir, "PYTHONDONTWRITEBYTECODE": "1", **thread_env()}


def apply_all(host_workdir: str, cgroup_dirs: list, limits: Limits, mark=None) -> dict[str, LayerStatus]:
    """Apply every available layer to this (child) process; returns layer -> status. ``mark(name)``,
    when given, is called as each layer is done (the layer-cost benchmark times them)."""
    mark = mark or _unmarked
    status = {"session": _new_session()}
    mark("session")
    uid = sandbox_uid(namespaces.host_pid())         # the pid the grader knows, not the namespace's 1
    root = os.geteuid() == 0
    if cgroup_dirs:
        cgroups.join(cgroup_dirs)
        status["cgroup"] = applied()
        mark("cgroup join")
    workdir, own_uid = _isolate_files(status, host_workdir, limits, uid, root, mark)
    os.environ.clear()
    os.environ.update(sandbox_env(workdir))
    tempfile.tempdir = None                          # asked again from TMPDIR: the fork server's answer was /tmp
    os.chdir(workdir)
    mark("environment and working folder")
    status["rlimits"] = _rlimits(limits)
    mark("rlimits")
    status["landlock"] = _landlock([workdir, "/dev/shm"] if workdir != host_workdir else [workdir])
    mark("landlock")
    status["uid"] = _drop_root(uid, own_uid) if root else _drop_namespace_capabilities(status)
    mark("uid drop")
    status["seccomp"] = seccomp.load()
    mark("seccomp")
    if hasattr(_libc, "prctl"):                                   # Linux: die with the fork server
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    return status


def _unmarked(name: str) -> None:
    pass


def _isolate_files(status: dict, host_workdir: str, limits: Limits, uid: int, root: bool,
                   mark=_unmarked) -> tuple[str, bool]:
    """Namespaces, then the worker's own root (or, where it cannot be built, the host's tree with a private
    /tmp, Python made reachable for any uid and this package hidden); returns the working folder and whether
    the worker can take a uid of its own."""
    if not root:
        status["user namespace"] = namespaces.enter_user_namespace()
        mark("user namespace")
    if root or status["user namespace"].state is State.APPLIED:
        status.update(namespaces.enter(mark))
    else:
        status.update({n: missing("no user namespace") for n in [*namespaces.NAMESPACES, "PID namespace"]})
    if status["mount namespace"].state is not State.APPLIED:
        status["own root"] = missing("no mount namespace")
        status["this package hidden"] = missing("no mount namespace (hidden only by Landlock's allowlist)")
        own_uid = root and python_world_readable()
        if own_uid:
            os.chown(host_workdir, uid, uid)
        return host_workdir, own_uid
    workdir = _own_root(status, host_workdir, limits, mark)
    if workdir is None:
        return _host_tree(status, host_workdir, limits, uid, root, mark)
    own_uid = root and python_world_readable()               # its root's folders above Python's are open
    if own_uid:
        for path in (workdir, os.path.dirname(workdir) + "/shm"):
            os.chown(path, uid, uid)
    status["python for any uid"] = _python_in_own_root(root, own_uid)
    status["this package hidden"] = _hide_package(in_own_root=True)
    mark("this package hidden")
    return workdir, own_uid


def _own_root(status: dict, host_workdir: str, limits: Limits, mark) -> str | None:
    """The worker's own root (``rootfs``), its working folder on its private tmpfs; None where it cannot be
    built (the status says why)."""
    try:
        workdir, proc = rootfs.own_root(host_workdir, root_paths(), limits.disk_bytes)
    except OSError as exc:
        status["own root"] = missing(f"{exc}; the host's folders stay in view (not readable: Landlock)")
        return None
    status["own root"] = applied(f"{len(root_paths())} paths bound read-only, {proc}")
    status["private /tmp"] = applied(f"{limits.disk_bytes >> 20} MiB tmpfs, also /dev/shm")
    mark("own root")
    return workdir


def _python_in_own_root(root: bool, own_uid: bool) -> LayerStatus:
    if not root:
        return LayerStatus(State.NOT_NEEDED, "not root: the grader's own uid runs Python")
    if own_uid:
        return applied("its own root: the folders above Python's are its own")
    return missing(f"{os.path.dirname(os.__file__)} is not readable by other users")


def _host_tree(status: dict, host_workdir: str, limits: Limits, uid: int, root: bool, mark) -> tuple[str, bool]:
    """No root of its own: the host's tree, with Python made reachable for any uid, the private tmpfs over
    /tmp and this package's folders covered."""
    status["python for any uid"] = _reveal_python()
    mark("python bound for any uid")
    own_uid = root and python_world_readable()
    workdir = _workdir(status, host_workdir, limits, uid if own_uid else None)
    mark("private tmpfs")
    status["this package hidden"] = _hide_package()
    mark("this package hidden")
    if own_uid and workdir == host_workdir:
        os.chown(workdir, uid, uid)
    return workdir, own_uid


def _reveal_python() -> LayerStatus:
    try:
        covered = namespaces.reveal(read_paths())
    except OSError as exc:
        return missing(str(exc))
    return applied(f"{', '.join(covered)} covered" if covered else "nothing to cover")


def _hide_package(in_own_root: bool = False) -> LayerStatus:
    """After every other mount: nothing below re-imports this package's files (the worker's modules
    were imported by the fork server), and a later mount cannot uncover them. In the worker's own root
    only the folders inside a bound one are there to cover (a system-wide install)."""
    try:
        covered = namespaces.hide(hidden_dirs())
    except OSError as exc:
        return missing(f"{exc} (hidden only by Landlock's allowlist)")
    if in_own_root:
        return applied(f"{len(covered)} folders covered, {len(hidden_dirs()) - len(covered)} not in its root")
    return applied(f"{len(covered)} folders covered")


def _workdir(status: dict, host_workdir: str, limits: Limits, uid: int | None) -> str:
    """The private size-capped tmpfs, or the host folder where it cannot be mounted."""
    try:
        workdir = namespaces.private_tmp(limits.disk_bytes, uid, keep=read_paths())
    except OSError as exc:
        status["private /tmp"] = missing(str(exc))
        return host_workdir
    status["private /tmp"] = applied(f"{limits.disk_bytes >> 20} MiB tmpfs, also /dev/shm")
    return workdir


def _new_session() -> LayerStatus:
    try:
        os.setsid()
    except OSError:
        pass
    return applied()


def _rlimits(limits: Limits) -> LayerStatus:
    vm = _current_vm_bytes()
    wanted = {
        resource.RLIMIT_CPU: limits.cpu_seconds,
        resource.RLIMIT_AS: vm + limits.address_space_extra,
        resource.RLIMIT_FSIZE: limits.file_bytes,
        resource.RLIMIT_NOFILE: limits.open_files,
        resource.RLIMIT_NPROC: limits.processes,
        resource.RLIMIT_CORE: 0,
    }
    for which, value in wanted.items():
        resource.setrlimit(which, (value, value))          # soft = hard: nothing left to raise
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)            # too-large writes fail with EFBIG instead
    return applied()


def _current_vm_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 1 << 30


def _landlock(write_paths: list[str]) -> LayerStatus:
    if not landlock.abi_version():
        return missing("kernel without Landlock")
    info = landlock.restrict(read_paths(), write_paths)
    return applied(f"ABI {info['abi']}")


def _drop_root(uid: int, own_uid: bool) -> LayerStatus:
    """Become a uid of our own; where Python stays in a private directory (e.g. under /root, without
    a mount namespace), stay uid 0 but drop every capability, so limits cannot be raised."""
    if own_uid:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        return applied("a uid of its own")
    drop_capabilities()
    return applied("uid 0 kept: Python is in a private directory; all capabilities dropped")


def _drop_namespace_capabilities(status: dict) -> LayerStatus:
    """Not root: the uid stays; the capabilities a user namespace gave are dropped."""
    if status.get("user namespace", missing()).state is not State.APPLIED:
        return LayerStatus(State.KEPT, "not root")
    drop_capabilities()
    return LayerStatus(State.KEPT, "not root", then="the capabilities of its user namespace dropped")


def python_world_readable() -> bool:
    """Can an unprivileged uid read this Python's standard library?"""
    stdlib = os.path.dirname(os.__file__)
    path = "/"
    for part in Path(stdlib).parts[1:]:
        path = os.path.join(path, part)
        if not os.stat(path).st_mode & 0o001:
            return False
    return bool(os.stat(stdlib).st_mode & 0o004)


def drop_capabilities() -> None:
    """capset(): empty effective, permitted and inheritable sets (v3 header, two 32-bit words)."""
    if not hasattr(_libc, "capset"):
        raise OSError("capset() is not available on this system")
    header = struct.pack("<Ii", 0x20080522, 0)
    data = bytes(24)
    if _libc.capset(ctypes.c_char_p(header), ctypes.c_char_p(data)) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def sandbox_uid(pid: int) -> int:
    return UID_BASE + pid
