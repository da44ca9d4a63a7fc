"""Landlock (Linux >= 5.13) through raw syscalls: allow-listed file access, no TCP, scoped signals.

Only what the running kernel supports is requested: the ABI version decides
which rights exist (network rules from ABI 4, signal and abstract-socket
scoping from ABI 6). ``abi_version()`` returns 0 where Landlock is missing.
"""
from __future__ import annotations

import ctypes
import os
import struct

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446   # same on x86_64 and arm64
PR_SET_NO_NEW_PRIVS = 38
RULE_PATH_BENEATH = 1

FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_ALL_V1 = (1 << 13) - 1             # execute .. make_sym
FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

READ = FS_READ_FILE | FS_READ_DIR

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def abi_version() -> int:
    try:
        v = _libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except Exception:  # noqa: BLE001 - no syscall() in this libc
        return 0
    return max(0, int(v))


def fs_rights(abi: int) -> int:
    rights = FS_ALL_V1
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


def restrict(read_paths, write_paths, abi: int | None = None) -> dict:
    """Confine this process (and its future children) for good; returns what was enforced.

    ``read_paths`` may be read (files and directories); ``write_paths`` may be
    read and written. Everything else on the file system is denied, execve is
    denied everywhere, TCP bind/connect is denied (ABI >= 4), and signals and
    abstract unix sockets cannot reach processes outside the sandbox (ABI >= 6).
    """
    abi = abi_version() if abi is None else abi
    if abi < 1:
        raise OSError("Landlock is not available on this kernel")
    handled = fs_rights(abi)
    attr = struct.pack("<QQQ", handled, NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0,
                       SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    buf = ctypes.create_string_buffer(attr[:size], size)
    fd = _check(_libc.syscall(SYS_CREATE_RULESET, buf, ctypes.c_size_t(size), ctypes.c_uint32(0)))
    try:
        write_rights = handled & ~FS_EXECUTE
        for path in read_paths:
            _allow(fd, path, READ)
        for path in write_paths:
            _allow(fd, path, write_rights)
        _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        _check(_libc.syscall(SYS_RESTRICT_SELF, ctypes.c_int(fd), ctypes.c_uint32(0)))
    finally:
        os.close(fd)
    return {"abi": abi, "tcp_denied": abi >= 4, "signals_scoped": abi >= 6}


def _allow(ruleset_fd: int, path: str, rights: int) -> None:
    try:
        pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return                                           # a missing optional path
    try:
        if not os.path.isdir(path):
            rights &= FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
        attr = ctypes.create_string_buffer(struct.pack("<Qi", rights, pfd), 12)
        _check(_libc.syscall(SYS_ADD_RULE, ctypes.c_int(ruleset_fd), ctypes.c_int(RULE_PATH_BENEATH),
                             attr, ctypes.c_uint32(0)))
    finally:
        os.close(pfd)


def _check(ret: int) -> int:
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return ret
