"""A folder of outputs written as one whole: a stop or a kill leaves the old folder or the new one.

nbgrader's autograded notebooks and its feedback pages are folders (``autograded/<student>/<assignment>``,
``feedback/<student>/<assignment>``) that nbgrader and ``release_feedback`` read as a set: a folder
holding some notebooks of this run and some of the last (or only some) would be read as valid. As
nbgrader does (it replaces such a folder whole), the new files are written into a folder beside it,
which then takes its place.

The folder beside it (``.partial-``) and the old one while the new takes its place (``.replaced-``) are named
for their writer (its host and pid) and the folder they belong to, so leftovers are settled only once their
writer is gone (``settle``): a Dask worker on another machine may still be writing one, and a grading process
killed between the two renames leaves the new folder whole beside the old: the new one then takes its place.
"""
from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from pathlib import Path

from ..gradebook.holder import alive
from ..records import OutputError, atomic_write, name_digest
from ..lifecycle import critical
from .. import durable

STAGE, OLD = ".partial-", ".replaced-"
STALE_SECONDS = 3600          # a stage of another machine's writer, untouched this long, is abandoned


def replace_folder(folder: Path, files: dict[str, bytes | str]) -> None:
    """``folder`` holding exactly ``files`` (name -> content); OutputError if it cannot be written.

    A kill between the two renames leaves no folder (and the old one under a dot name beside it):
    never a mix. A stop signal waits for the swap (``critical``)."""
    folder = Path(folder)
    if os.path.lexists(folder) and (os.path.islink(folder) or not os.path.isdir(folder)):
        raise OutputError(f"could not write {folder}: something other than a folder is there "
                          "(a file or a link), and it is left as it is")
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        settle(folder.parent, folder.name)                 # what a killed writer left of this folder
        stage = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f"{STAGE}{_writer()}-", suffix=f"-{_tag(folder.name)}"))
    except OSError as exc:
        raise OutputError(f"could not write {folder}: {exc.strerror or exc}") from exc
    old = stage.with_name(OLD + stage.name[len(STAGE):])
    try:
        os.chmod(stage, 0o777 & ~_umask())              # as mkdir would make it (mkdtemp makes it private)
        for name, data in files.items():
            atomic_write(stage / name, data)
        with critical():
            if os.path.lexists(folder):
                os.rename(folder, old)
            os.rename(stage, folder)
            _remove(old)
            _durable(folder.parent)
    except BaseException as exc:
        shutil.rmtree(stage, ignore_errors=True)
        if os.path.lexists(old) and not os.path.lexists(folder):
            os.rename(old, folder)                      # the old folder stays where it was
        if isinstance(exc, OSError):
            raise OutputError(f"could not write {folder}: {exc.strerror or exc}") from exc
        raise


def remove_stages(parent: Path) -> None:
    """Settle what writers killed before or during their swap left in ``parent``: a run that stops kills
    its grading processes, which may be writing a student's autograded notebooks."""
    settle(parent)


def settle(parent: Path, name: str | None = None) -> None:
    """Finish or clean what each writer that is gone left in ``parent`` (of folder ``name`` only, if given):
    a new folder staged whole beside the old one (the kill came between the renames) takes its place; a
    stage alone (maybe half-written) goes, as does an old folder once the new one is in place. A stage whose
    writer may still be writing (alive on this machine, or on another one and touched within
    ``STALE_SECONDS``) is left alone."""
    tag = None if name is None else _tag(name)
    for (key, their_tag), pair in _leftovers(Path(parent)).items():
        if tag in (None, their_tag) and all(_abandoned(p, key) for p in pair.values()):
            _finish(Path(parent), name if name is not None else _untag(their_tag), pair)


def _finish(parent: Path, name: str | None, pair: dict) -> None:
    stage, old = pair.get(STAGE), pair.get(OLD)
    if old is not None:
        if name is None:
            return                      # whose folder this is is not known here: kept for that folder's next write
        if not os.path.lexists(parent / name):
            os.rename(stage if stage is not None else old, parent / name)    # the new one was whole once the old
            _durable(parent)                                                  # was moved aside
    for path in (stage, old):
        if path is not None:
            _remove(path)


def _leftovers(parent: Path) -> dict:
    """(writer, folder tag) -> {STAGE or OLD: path} of what writers left in ``parent``."""
    found: dict = {}
    try:
        entries = [p for p in parent.iterdir() if p.name.startswith((STAGE, OLD)) and not p.is_symlink()]
    except OSError:
        return found
    for path in entries:
        kind = STAGE if path.name.startswith(STAGE) else OLD
        host, pid, rand, tag = (path.name[len(kind):].split("-", 3) + ["", "", ""])[:4]
        found.setdefault((f"{host}-{pid}-{rand}", tag), {})[kind] = path
    return found


def _abandoned(path: Path, key: str) -> bool:
    """Whether the writer of ``path`` (``key``: host, pid, random) is gone: a process of this machine that
    no longer runs, or another machine's (or an older version's) that has not touched it in an hour."""
    host, pid = key.split("-")[:2]
    if host == _host() and pid.isdigit():
        return int(pid) != os.getpid() and not alive(int(pid))
    try:
        return time.time() - path.lstat().st_mtime > STALE_SECONDS
    except OSError:
        return False


def _writer() -> str:
    return f"{_host()}-{os.getpid()}"


def _host() -> str:
    return name_digest(socket.gethostname(), 8)


def _tag(name: str) -> str:
    """The folder's name in its stages' names (a digest when long: the stage's name must fit)."""
    return name if len(os.fsencode(name)) <= 128 else "~" + name_digest(name, 24)


def _untag(tag: str) -> str | None:
    """The folder's name a stage's tag gives, when it gives it (not a digest, not an older version's stage)."""
    return None if not tag or (tag.startswith("~") and len(tag) == 25) else tag


def _durable(parent: Path) -> None:
    """The swap reaches the disk as each file does: now, or at the end of ``durable.synced_at_end``."""
    if durable._Deferred.folders is None:
        durable._fsync_dir(parent)
    else:
        durable._Deferred.folders.add(parent)


def _remove(path: Path) -> None:
    if os.path.lexists(path):
        shutil.rmtree(path, ignore_errors=True)        # a folder of ours (never a link: refused above)


def _umask() -> int:
    return durable._umask()
