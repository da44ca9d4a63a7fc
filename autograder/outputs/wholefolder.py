"""A folder of outputs written as one whole: a stop or a kill leaves the old folder or the new one.

nbgrader's autograded notebooks and its feedback pages are folders (``autograded/<student>/<assignment>``,
``feedback/<student>/<assignment>``) that nbgrader and ``release_feedback`` read as a set: a folder
holding some notebooks of this run and some of the last (or only some) would be read as valid. As
nbgrader does (it replaces such a folder whole), the new files are written into a folder beside it,
which then takes its place.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from ..records import OutputError, atomic_write


def replace_folder(folder: Path, files: dict[str, bytes | str]) -> None:
    """``folder`` holding exactly ``files`` (name -> content); OutputError if it cannot be written.

    A kill between the two renames leaves no folder (and the old one under a dot name beside it):
    never a mix. A stop signal waits for the swap (``critical``)."""
    from ..lifecycle import critical
    folder = Path(folder)
    if os.path.lexists(folder) and (os.path.islink(folder) or not os.path.isdir(folder)):
        raise OutputError(f"could not write {folder}: something other than a folder is there "
                          "(a file or a link), and it is left as it is")
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".partial-"))
    except OSError as exc:
        raise OutputError(f"could not write {folder}: {exc.strerror or exc}") from exc
    old = stage.with_name(stage.name.replace(".partial-", ".replaced-", 1))
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
    """Remove what a writer killed before its swap left in ``parent`` (its ``.partial-`` folders): a run
    that stops kills its grading processes, which may be writing a student's autograded notebooks."""
    try:
        stages = [p for p in Path(parent).iterdir() if p.name.startswith(".partial-") and not p.is_symlink()]
    except OSError:
        return
    for stage in stages:
        _remove(stage)


def _durable(parent: Path) -> None:
    """The swap reaches the disk as each file does: now, or at the end of ``durable.synced_at_end``."""
    from .. import durable
    if durable._Deferred.folders is None:
        durable._fsync_dir(parent)
    else:
        durable._Deferred.folders.add(parent)


def _remove(path: Path) -> None:
    if os.path.lexists(path):
        shutil.rmtree(path, ignore_errors=True)        # a folder of ours (never a link: refused above)


def _umask() -> int:
    from ..durable import _umask as umask
    return umask()
