"""outputs.wholefolder: a folder of outputs is replaced whole, never written through a link."""
import signal

import pytest

from autograder.outputs.wholefolder import replace_folder
from autograder.records import OutputError
from autograder.lifecycle import Stop


def test_a_folder_is_replaced_whole(tmp_path):
    folder = tmp_path / "autograded" / "ada" / "ch04"
    replace_folder(folder, {"a.ipynb": "old a", "b.ipynb": "old b"})
    replace_folder(folder, {"a.ipynb": "new a"})
    assert {p.name: p.read_text() for p in folder.iterdir()} == {"a.ipynb": "new a"}
    assert [p.name for p in folder.parent.iterdir()] == ["ch04"]           # nothing left beside it


def test_a_stop_midway_keeps_the_old_folder_and_leaves_nothing(tmp_path, monkeypatch):
    folder = tmp_path / "ch04"
    replace_folder(folder, {"a.ipynb": "old a", "b.ipynb": "old b"})
    import autograder.outputs.wholefolder as wholefolder
    real, calls = wholefolder.atomic_write, []

    def stopped_on_second(path, data):
        calls.append(path)
        if len(calls) == 2:
            raise Stop(signal.SIGTERM)
        real(path, data)
    monkeypatch.setattr(wholefolder, "atomic_write", stopped_on_second)
    with pytest.raises(Stop):
        replace_folder(folder, {"a.ipynb": "new a", "b.ipynb": "new b"})
    assert {p.name: p.read_text() for p in folder.iterdir()} == {"a.ipynb": "old a", "b.ipynb": "old b"}
    assert [p.name for p in tmp_path.iterdir()] == ["ch04"]


@pytest.mark.parametrize("kind", ["link", "file"])
def test_a_link_or_file_in_the_way_is_left_alone(tmp_path, kind):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = tmp_path / "ch04"
    if kind == "link":
        folder.symlink_to(elsewhere)
    else:
        folder.write_text("mine")
    with pytest.raises(OutputError, match="left as it is"):
        replace_folder(folder, {"a.ipynb": "new a"})
    assert not any(elsewhere.iterdir()) and (folder.is_symlink() if kind == "link" else folder.read_text() == "mine")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ch04", "elsewhere"]


# --- what a killed writer leaves is settled once it is gone, never while it writes -----------------

def _killed_at_rename(folder, files, at: int) -> None:
    """``replace_folder`` in a child process that is killed (SIGKILL) right after its rename number ``at``."""
    import os
    import autograder.outputs.wholefolder as wholefolder
    pid = os.fork()
    if pid == 0:
        real, calls = os.rename, []

        def rename(a, b):
            real(a, b)
            calls.append(b)
            if len(calls) == at:
                os.kill(os.getpid(), signal.SIGKILL)
        wholefolder.os.rename = rename
        try:
            replace_folder(folder, files)
        finally:
            os._exit(1)
    os.waitpid(pid, 0)


@pytest.mark.parametrize("at", [1, 2], ids=["between-the-renames", "before-the-old-goes"])
def test_a_writer_killed_during_its_swap_leaves_the_new_folder_in_place(tmp_path, at):
    from autograder.outputs.wholefolder import remove_stages
    folder = tmp_path / "ada" / "ch04"
    replace_folder(folder, {"a.ipynb": "old a"})
    replace_folder(tmp_path / "ada" / "ch05", {"b.ipynb": "other"})
    _killed_at_rename(folder, {"a.ipynb": "new a"}, at)
    left = sorted(p.name.split("-")[0] for p in folder.parent.iterdir())   # what the kill left
    assert left == ([".partial", ".replaced", "ch05"] if at == 1 else [".replaced", "ch04", "ch05"]), left
    remove_stages(folder.parent)                                             # the next run (or a stop) settles it
    assert {p.name: p.read_text() for p in folder.iterdir()} == {"a.ipynb": "new a"}
    assert sorted(p.name for p in folder.parent.iterdir()) == ["ch04", "ch05"]


def test_the_next_write_of_the_folder_settles_what_a_killed_one_left(tmp_path):
    folder = tmp_path / "ch04"
    replace_folder(folder, {"a.ipynb": "old a"})
    _killed_at_rename(folder, {"a.ipynb": "new a"}, 1)
    replace_folder(folder, {"a.ipynb": "newer a"})
    assert [p.name for p in tmp_path.iterdir()] == ["ch04"] and (folder / "a.ipynb").read_text() == "newer a"


def test_a_stage_whose_writer_may_still_write_is_left_alone(tmp_path):
    """A stage of a live process of this machine, or a fresh one of another machine (a Dask worker's), is
    kept; once the process is gone, or the other machine's stage is an hour old, it goes."""
    import os
    import subprocess
    import sys
    import time
    import autograder.outputs.wholefolder as wholefolder
    from autograder.outputs.wholefolder import STAGE, remove_stages
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        here = tmp_path / f"{STAGE}{wholefolder._host()}-{writer.pid}-abc_123-ch04"
        there = tmp_path / f"{STAGE}00000000-{os.getpid()}-abc_123-ch04"
        for stage in (here, there):
            stage.mkdir()
            (stage / "a.ipynb").write_text("half")
        remove_stages(tmp_path)
        assert here.exists() and there.exists()
    finally:
        writer.kill()
        writer.wait()
    an_hour_ago = time.time() - wholefolder.STALE_SECONDS - 60
    os.utime(there, (an_hour_ago, an_hour_ago))
    remove_stages(tmp_path)
    assert list(tmp_path.iterdir()) == []
