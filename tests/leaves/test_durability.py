"""Outputs are renamed into place whole; a batch waits for the disk once, at its end."""
import os

from autograder import durable
from autograder.durable import atomic_write, synced_at_end


def _count(monkeypatch) -> dict:
    calls = {"fsync": 0, "syncfs": 0}
    real_fsync, real_syncfs = os.fsync, durable._syncfs

    def fsync(fd):
        calls["fsync"] += 1
        real_fsync(fd)

    def syncfs(fd):
        calls["syncfs"] += 1
        real_syncfs(fd)
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(durable, "_syncfs", syncfs)
    return calls


def test_a_write_alone_is_durable_when_it_returns(tmp_path, monkeypatch):
    calls = _count(monkeypatch)
    atomic_write(tmp_path / "a" / "one.json", "{}")
    assert calls == {"fsync": 2, "syncfs": 0}           # the file, then the folder that names it


def test_inside_a_batch_the_disk_is_waited_for_once_at_the_end(tmp_path, monkeypatch):
    calls = _count(monkeypatch)
    with synced_at_end():
        for i in range(20):
            atomic_write(tmp_path / f"student{i}" / "index.html", f"<p>{i}</p>")
        with synced_at_end():                            # nested: the outer block syncs
            atomic_write(tmp_path / "report.html", "<p>")
        assert calls == {"fsync": 0, "syncfs": 0}
        assert sorted(p.name for p in tmp_path.iterdir())[:2] == ["report.html", "student0"]
        assert not [p for p in tmp_path.rglob(".partial-*")]     # every file already whole, in place
    assert calls == {"fsync": 0, "syncfs": 1}            # one file system


def test_the_end_syncs_even_when_the_batch_fails(tmp_path, monkeypatch):
    calls = _count(monkeypatch)
    try:
        with synced_at_end():
            atomic_write(tmp_path / "one.json", "{}")
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert calls["syncfs"] == 1 and (tmp_path / "one.json").read_text() == "{}"
    atomic_write(tmp_path / "two.json", "{}")            # after the block: durable one by one again
    assert calls["fsync"] == 2


def test_a_batch_writes_its_records_without_waiting_for_the_disk_per_file(tmp_path, monkeypatch):
    from autograder.run.batch import grade_batch
    from batch_helpers import make_class
    course = make_class(tmp_path, ["correct-1", "no-scaling"])
    calls = _count(monkeypatch)
    result = grade_batch(course=course, workers=1, progress=False, outputs=False)
    assert len(result.records) == 2 and not any(r.grader_error for r in result.records)
    assert calls == {"fsync": 0, "syncfs": 1}
