"""A root of the worker's own: in its mount namespace, only what it was given exists.

Landlock decides what a worker may open, but not what it may ``stat``: with the host's tree in view, a
worker saw classmates' folders, their record files and the gradebook's size change (issue 35, item 9).
``own_root`` builds a new root on a small tmpfs and moves the worker into it (``pivot_root``): the paths
Python and the system libraries need, bound read-only at their own places (so every path stays what it
was), ``/dev/null``, ``/dev/zero`` and ``/dev/urandom``, a ``/proc`` of the worker's own PID namespace,
and one size-capped tmpfs at ``/tmp`` holding the working folder and backing ``/dev/shm``. Nothing else
is there to be stat'ed, listed or watched: not the course, not the exchange, not the home folders. The
folders above each bound path are the tmpfs's own (0755), so an unprivileged uid reaches Python wherever
it is installed (under ``/root``, say). The old root is detached, and the new one is made read-only.

Each step raises OSError with what failed; the caller then keeps the host's tree (with the private
``/tmp`` and the hiding mounts of ``namespaces``) and says so.
"""
from __future__ import annotations

import ctypes
import os
import platform

from .namespaces import MS_BIND, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_RDONLY, MS_REC, MS_REMOUNT, WORKDIR, _mount

SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41}.get(platform.machine())
MNT_DETACH = 2
DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom")
MS_NOATIME, MS_NODIRATIME, MS_RELATIME, MS_STRICTATIME = 1024, 2048, 1 << 21, 1 << 24
_STATVFS_FLAGS = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
                  (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME), (os.ST_RELATIME, MS_RELATIME))
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def own_root(mountpoint: str, visible, size_bytes: int, own_proc: bool = True) -> tuple[str, str]:
    """Build the root on ``mountpoint`` (an empty folder of the host, the worker's own), move into it; returns
    the working folder and which /proc it has. ``visible``: the paths to bind read-only (``layers.root_paths``).
    ``own_proc``: mount a /proc of this PID namespace (else, or where the kernel refuses it, the host's /proc
    is bound: its processes can then be stat'ed, though Landlock keeps reading to /proc/self)."""
    if SYS_PIVOT_ROOT is None:
        raise OSError(f"no pivot_root for {platform.machine()} here")
    os.umask(0o022)                                   # its folders open to its own uid, whatever the grader's umask
    _mount("tmpfs", mountpoint, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=0755")
    try:
        proc = _lay_out(mountpoint, visible, size_bytes, own_proc)
        _pivot(mountpoint)
    except OSError:
        _libc.umount2(mountpoint.encode(), MNT_DETACH)
        raise
    _detach_old_root()
    try:
        _mount(None, "/", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    except OSError:
        pass                                          # writable, but Landlock refuses writes outside /tmp
    return WORKDIR, proc


def _lay_out(new: str, visible, size_bytes: int, own_proc: bool) -> str:
    """/tmp first (paths below /tmp, a virtual environment there, are bound inside it), then the rest."""
    tmp = _folder(new, "/tmp")
    _mount("tmpfs", tmp, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, f"size={size_bytes},mode=0711")
    os.mkdir(new + WORKDIR, 0o700)
    os.mkdir(new + "/tmp/shm", 0o700)
    for path in sorted(visible):
        _bind(path, new + path, read_only=True)
    for device in DEVICES:
        if os.path.exists(device):
            _bind(device, new + device, read_only=False)
    _mount(new + "/tmp/shm", _folder(new, "/dev/shm"), None, MS_BIND)
    return _proc(_folder(new, "/proc"), own_proc)


def _folder(new: str, path: str) -> str:
    target = new + path
    os.makedirs(target, mode=0o755, exist_ok=True)
    return target


def _bind(source: str, target: str, read_only: bool) -> None:
    """``source`` at ``target`` (a link stays a link, to the same place); read-only keeps the flags the host's
    mount has and may not be dropped in a user namespace (nosuid, nodev, noexec, its atime setting)."""
    if os.path.islink(source):
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        os.symlink(os.readlink(source), target)
        return
    fd = os.open(source, os.O_PATH | os.O_CLOEXEC)
    try:
        if os.path.isdir(f"/proc/self/fd/{fd}"):
            os.makedirs(target, mode=0o755, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
            open(target, "ab").close()
        _mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
        if read_only:
            kept = os.statvfs(f"/proc/self/fd/{fd}").f_flag
            flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV
            flags |= sum(ms for st, ms in _STATVFS_FLAGS if kept & st and ms not in (MS_NOSUID, MS_NODEV))
            if not kept & (os.ST_NOATIME | os.ST_RELATIME):
                flags |= MS_STRICTATIME
            _mount(None, target, None, flags)
    finally:
        os.close(fd)


def _proc(target: str, own: bool) -> str:
    """A /proc showing this PID namespace only; where the kernel refuses it (a /proc partly covered on the
    host, as in a container, or no PID namespace of its own), the host's, bound with what covers it. Says which."""
    why = "not asked"
    if own:
        try:
            _mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
            return "its own /proc"
        except OSError as exc:
            why = exc.strerror or str(exc)
    _mount("/proc", target, None, MS_BIND | MS_REC)
    return f"the host's /proc (its own: {why})"


def _pivot(new: str) -> None:
    """pivot_root(".", "."): the new root becomes the root, the old one ends up on top of it."""
    os.chdir(new)
    if _libc.syscall(SYS_PIVOT_ROOT, b".", b".") != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"pivot_root: {os.strerror(err)}")


def _detach_old_root() -> None:
    """Past the pivot there is no going back to the host's tree: an old root that cannot be detached would stay
    in view, so the worker must not start (RuntimeError, not the OSError that keeps the host's tree)."""
    if _libc.umount2(b".", MNT_DETACH) != 0:
        raise RuntimeError(f"the old root could not be detached: {os.strerror(ctypes.get_errno())}")
    os.chdir("/")
