"""A seccomp filter for the worker, built with libseccomp (through ``pyseccomp``), never hand-written BPF.

Everything is allowed except what a student's code never needs and an attacker would use:
running any program (``execve``/``execveat``, so not even a memfd), keyrings, System V IPC,
new or other namespaces, mounts, tracing other processes, kernel-module, BPF and io_uring
interfaces, and every socket family but IPv4 and IPv6 (which meet an empty network namespace): no
Unix socket that could reach a host service (a datagram socketpair could be pointed at one too),
no vsock to the hypervisor, netlink, packet or kernel-crypto sockets; and watching files (inotify, fanotify and
dnotify's ``fcntl(F_NOTIFY)``), which would tell a worker when and where classmates' submissions, records and
the gradebook change, whatever it may read. Denied calls fail with EPERM, so Python
raises a clear ``PermissionError``. ``clone3`` fails with ENOSYS so that the C library falls back
to ``clone``, whose namespace flags the filter can see.

The filter is built once in the fork server (``prepare``), where libseccomp also compiles it to
BPF; each worker installs that compiled program (``load``: no_new_privs, then the filter, as
``seccomp_load`` does), which saves libseccomp's per-load probing and compiling, about 1 ms per
worker. Where the export fails, each worker loads the filter through libseccomp as before.
"""
from __future__ import annotations

import ctypes
import errno
import os
import socket
import tempfile

from .status import LayerStatus, State, applied, missing

DENIED = (
    "execve", "execveat",                                              # no program, not even a memfd
    "keyctl", "add_key", "request_key",                                # keyrings
    "shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl",
    "semget", "semop", "semtimedop", "semctl",                         # System V IPC
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",        # namespaces and mounts
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "name_to_handle_at", "open_by_handle_at", "acct", "swapon", "swapoff", "reboot", "quotactl",
    "inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark",   # watching files
)
F_NOTIFY = 1026                    # fcntl's dnotify: a signal when anything in a folder changes
CLONE_NAMESPACES = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000,
                    0x40000000, 0x00000080)    # NEWNS UTS IPC USER PID NET, NEWCGROUP, NEWTIME
_SOCK_TYPE_MASK = 0xF
_INT = 0xFFFFFFFF                  # the kernel reads socket families as ints: bits above 32 are ignored
_OTHER_FAMILIES = [f for f in range(max(socket.AF_INET, socket.AF_INET6)) if f not in (socket.AF_INET, socket.AF_INET6)]

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
_prepared = None


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class Compiled:
    """The filter as libseccomp compiled it: BPF instructions (8 bytes each), installed as they are."""

    def __init__(self, flt):
        with tempfile.TemporaryFile() as f:
            flt.export_bpf(f)
            f.seek(0)
            code = f.read()
        if not code or len(code) % 8 or len(code) // 8 > 0xFFFF:
            raise OSError(f"libseccomp exported {len(code)} bytes, not a BPF program")
        self.code = ctypes.create_string_buffer(code, len(code))
        self.fprog = _SockFprog(len(code) // 8, ctypes.cast(self.code, ctypes.c_void_p))

    def load(self) -> None:
        _prctl(PR_SET_NO_NEW_PRIVS, 1, 0)                   # required, and seccomp_load does it too
        _prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(self.fprog))


def _prctl(option: int, value: int, pointer: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(ctypes.c_int(option), ctypes.c_ulong(value), ctypes.c_ulong(pointer), ctypes.c_ulong(0),
                  ctypes.c_ulong(0)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl({option}): {os.strerror(err)}")


def available() -> LayerStatus:
    """Whether seccomp can be used here (``doctor``), or why not."""
    try:
        import pyseccomp  # noqa: F401
    except (ImportError, RuntimeError, OSError) as exc:
        return missing(f"pyseccomp or libseccomp not installed ({str(exc)[:60]})")
    return LayerStatus(State.AVAILABLE)


def prepare():
    """Build the filter (once per fork server); None when seccomp is not available."""
    global _prepared
    if _prepared is None and available().state is State.AVAILABLE:
        flt = _build()
        try:
            _prepared = Compiled(flt)
        except (OSError, RuntimeError, ValueError):
            _prepared = flt                       # each worker compiles and loads it through libseccomp
    return _prepared


def _build():
    import pyseccomp as sc
    flt = sc.SyscallFilter(sc.ALLOW)
    deny = sc.ERRNO(errno.EPERM)
    for name in DENIED:
        _rule(flt, deny, name)
    _rule(flt, sc.ERRNO(errno.ENOSYS), "clone3")
    for flag in CLONE_NAMESPACES:
        _rule(flt, deny, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    for family in _OTHER_FAMILIES:                # compared as the kernel reads them: the low 32 bits
        _rule(flt, deny, "socket", sc.Arg(0, sc.MASKED_EQ, _INT, family))
    _rule(flt, deny, "socket", sc.Arg(0, sc.GT, max(socket.AF_INET, socket.AF_INET6)))     # high bits too
    _rule(flt, deny, "fcntl", sc.Arg(1, sc.MASKED_EQ, _INT, F_NOTIFY))
    _rule(flt, deny, "socketpair", sc.Arg(0, sc.MASKED_EQ, _INT, socket.AF_UNIX),
          sc.Arg(1, sc.MASKED_EQ, _SOCK_TYPE_MASK, socket.SOCK_DGRAM))
    return flt


def _rule(flt, action, name, *args) -> None:
    try:
        flt.add_rule(action, name, *args)
    except (OSError, ValueError, RuntimeError):
        pass                                      # a call this kernel or libseccomp does not know


def load() -> LayerStatus:
    """Confine this process and its future children for good; returns the status for the record."""
    flt = prepare()
    if flt is None:
        why = available()
        return why if why.state is State.MISSING else missing()
    flt.load()
    return applied()
