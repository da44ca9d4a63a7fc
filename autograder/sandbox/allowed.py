"""What a worker may see: the paths of its allowlist and of its own root, and this project's folders hidden from it.

``read_paths`` is Landlock's allowlist, fine-grained (a folder that holds this package is listed entry by
entry without it); ``root_paths`` what the worker's own root binds (``rootfs``), coarse (whole library
folders: a few mounts however many packages are installed; this package's folders inside them are covered
afterwards, ``namespaces.hide``). Both are computed once per fork server, which holds nothing secret.
"""
from __future__ import annotations

import functools
import glob
import importlib.util
import os
import sys

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


@functools.lru_cache(maxsize=1)
def root_paths() -> tuple[str, ...]:
    """What the worker's own root holds, each bound read-only at its own place: the system's library
    folders, fonts and time zones, Python's prefixes' library folders, its site-packages folders and
    pyvenv.cfg. Not /proc and /dev, which ``rootfs`` makes itself. A link stays a link (/lib -> usr/lib)."""
    paths = {p for p in SYSTEM_READ if os.path.lexists(p) and not p.startswith(("/proc/", "/dev/"))}
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    paths |= {p for pre in prefixes for p in glob.glob(os.path.join(pre, "lib*")) if os.path.isdir(p)}
    paths |= {p for pre in prefixes for p in [os.path.join(pre, "pyvenv.cfg")] if os.path.isfile(p)}
    paths |= {p for p in sys.path if p and os.path.isdir(p) and p.rstrip("/").endswith("-packages")}
    paths |= {os.path.realpath(p) for p in paths if os.path.islink(p)}      # where each link leads, too
    return tuple(sorted(p for p in paths if not any(_within(p, q) and p != q and not os.path.islink(q)
                                                   for q in paths)))
