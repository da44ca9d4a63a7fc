"""Isolation layers applied in a freshly forked worker, each detected at run time.

Order matters and is enforced by ``apply_all``: new session, cgroup (as root), network, IPC,
mount and PID namespaces (as root), a private size-capped /tmp and /dev/shm, Python made
reachable for an unprivileged uid, environment, working directory, rlimits, Landlock, dropping
root for a uid of the worker's own, then the seccomp filter. A layer the machine lacks is
reported as missing and the others still apply.
"""
from __future__ import annotations

import ctypes
import functools
import glob
import importlib.util
import os
import resource
import signal
import struct
import sys
from pathlib import Path

from . import cgroups, landlock, namespaces, seccomp
from .limits import Limits
from .status import LayerStatus, State, applied, available, missing

PR_SET_PDEATHSIG = 1
UID_BASE = 1_000_000                # sandbox uids: UID_BASE + worker pid, unique among live workers
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS")
_libc = ctypes.CDLL(None, use_errno=True)


def detect() -> dict[str, LayerStatus]:
    """Layer -> available, or why it is missing (what `doctor` prints, ``status.doctor_lines``)."""
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
        "PID namespace": unshare,
        "private /tmp": mounts,
        "python for any uid": unshare if root else missing("not root"),
        "cgroup": available(cgroups.available()) if cgroups.available() else
            missing("needs root and writable pids+memory controllers (without it a process that leaves its "
                    "session with setsid can outlive the worker)"),
    }


def _locked(root: bool, unshare: LayerStatus) -> LayerStatus:
    """Whether the worker's rlimits are locked: it drops root for a uid of its own, or its capabilities."""
    if not root:
        return missing("not root, so limits stay raisable up to their hard value")
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


SYSTEM_READ = ("/lib", "/lib32", "/lib64", "/libx32", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32",
               "/usr/local/lib", "/usr/local/lib64", "/usr/share/zoneinfo", "/usr/share/fonts",
               "/usr/share/matplotlib", "/etc/ld.so.cache", "/etc/localtime", "/etc/fonts", "/dev/null",
               "/dev/urandom", "/dev/zero", "/proc/self")


@functools.lru_cache(maxsize=1)
def read_paths() -> tuple[str, ...]:
    """What student code may read: Python's library folders, system libraries, fonts, /dev basics.

    Not all of /usr (nbgrader's exchange may live in /usr/local/share), and never this project's
    source: a site-packages folder holding one of HIDDEN_PACKAGES (a non-editable install) is
    listed entry by entry without them. Computed once per fork server.
    """
    paths = {p for p in SYSTEM_READ if os.path.exists(p)}
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    site = {p for p in sys.path if p and os.path.isdir(p) and p.rstrip("/").endswith("-packages")}
    site |= {p for pre in prefixes for p in glob.glob(os.path.join(pre, "lib*", "python*", "*-packages"))
             if not os.path.islink(p)}
    hidden_sites = {d for d in site if any(_is_hidden(n) for n in os.listdir(d))}
    libs = {p for pre in prefixes for p in glob.glob(os.path.join(pre, "lib*")) if os.path.isdir(p)}
    for lib in libs:
        paths |= _children(lib, skip=hidden_sites)
    paths |= {p for pre in prefixes for p in [os.path.join(pre, "pyvenv.cfg")] if os.path.isfile(p)}
    for d in site:
        inside = any(d.startswith(lib.rstrip(os.sep) + os.sep) for lib in libs)
        if d in hidden_sites:
            paths |= _children(d, skip=set(), hide=True)
        elif not inside:
            paths.add(d)
    return tuple(sorted(_without(paths, hidden_dirs())))


def _without(paths: set[str], hidden: tuple[str, ...]) -> set[str]:
    """``paths`` with no folder that holds a hidden one (a system-wide install in /usr/local/lib, say).

    Landlock allows a folder with everything below it and cannot exclude a subfolder, so an allowed
    folder above a hidden one is listed entry by entry without it. This only keeps the allowlist
    honest where mount namespaces are missing: the real defence is the empty mount over each
    hidden folder in the worker's own mount namespace (``namespaces.hide``)."""
    out = set()
    for path in paths:
        real = os.path.realpath(path)                      # /lib is /usr/lib on merged-usr systems
        if real in hidden:
            continue
        below = {h for h in hidden if h.startswith(real.rstrip(os.sep) + os.sep)}
        out |= _children(real, skip=below) if below else {path}
    return out


HIDDEN_PACKAGES = ("solutions", "autograder")


@functools.lru_cache(maxsize=1)
def hidden_dirs() -> tuple[str, ...]:
    """The resolved folders of this project's code, wherever it is installed: the packages in
    HIDDEN_PACKAGES and the folders their course files link to (an editable install's source/,
    release/, fixtures, adversarial). Found without importing ``solutions``: the fork server holds nothing secret.
    A folder holding Python itself is never hidden. Computed once per fork server."""
    found = set()
    for name in HIDDEN_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        found |= {os.path.realpath(p) for p in (spec.submodule_search_locations or []) if spec}
    for package in list(found):
        course = os.path.join(package, "course_files")
        for name in sorted(os.listdir(course)) if os.path.isdir(course) else ():
            found.add(os.path.realpath(os.path.join(course, name)))
    python = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, os.path.dirname(os.__file__))}
    return tuple(sorted(d for d in found if os.path.isdir(d) and not any(
        _within(py, d) for py in python)))


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _is_hidden(name: str) -> bool:
    """The package, module or extension of this project's own code (not its dist-info metadata)."""
    return name.split(".")[0] in HIDDEN_PACKAGES


def _children(directory: str, skip: set, hide: bool = False) -> set[str]:
    """``directory`` itself, or, when a ``skip`` subtree lies below, its entries minus that subtree."""
    if not hide and not any(s.startswith(directory.rstrip(os.sep) + os.sep) for s in skip):
        return {directory}
    out = set()
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if path in skip or (hide and _is_hidden(name)) or os.path.islink(path):
            continue
        if os.path.isdir(path) and any(s.startswith(path + os.sep) for s in skip):
            out |= _children(path, skip, hide)
        else:
            out.add(path)
    return out


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
    """Namespaces, Python made reachable for any uid, the private tmpfs; returns the working folder
    and whether the worker can take a uid of its own."""
    if not root:
        status["user namespace"] = namespaces.enter_user_namespace()
        mark("user namespace")
    if root or status["user namespace"].state is State.APPLIED:
        status.update(namespaces.enter(mark))
    else:
        status.update({n: missing("no user namespace") for n in [*namespaces.NAMESPACES, "PID namespace"]})
    mounts = status["mount namespace"].state is State.APPLIED
    if mounts:
        status["python for any uid"] = _reveal_python()
        mark("python bound for any uid")
    own_uid = root and python_world_readable()
    workdir = _workdir(status, host_workdir, limits, uid if own_uid else None) if mounts else host_workdir
    mark("private tmpfs")
    status["this package hidden"] = _hide_package() if mounts else \
        missing("no mount namespace (hidden only by Landlock's allowlist)")
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


def _hide_package() -> LayerStatus:
    """After every other mount: nothing below re-imports this package's files (the worker's modules
    were imported by the fork server), and a later mount cannot uncover them."""
    try:
        covered = namespaces.hide(hidden_dirs())
    except OSError as exc:
        return missing(f"{exc} (hidden only by Landlock's allowlist)")
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
