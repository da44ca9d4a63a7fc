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
