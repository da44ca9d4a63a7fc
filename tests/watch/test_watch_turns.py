"""Fairness covers the reading before the grading turn (issue 35, item 4): one account's folders, each four hard
links to one big file, once delayed a classmate by the reading of every one of them (66-75 s behind 80), because
``watch`` read every ready folder's digest before choosing one per owner. Now a pass reads at most one submission
per owner, looks into at most ``turns.MAX_LOOKS`` of its folders, and owners take turns least-read first, every
hard link counted against the account. Asserted on the work done and the order (bytes read, folders looked into,
who was graded when), never on the clock; for every file kind and size a flood can use."""
import os
import pwd
import subprocess

import pytest

from autograder.watch import service as service_module
from autograder.watch import turns
from autograder.watch.inbound import Name
from test_watch_units import _course, _owned, _service
from watch_helpers import A, submit_like_nbgrader

MIB = 1 << 20
FLOOD = 12
NOTEBOOKS = ["ex1_attention", "ex2_causal_mask", "ex3_memory", "ex4_cross_attention"]


@pytest.fixture
def accounts():
    """Two real accounts of this machine (ann, the classmate; eve, who floods), removed after the test."""
    if os.geteuid() != 0:
        pytest.skip("creating Linux accounts for the owner check needs root")
    names = [f"tn{os.getpid() % 10000}{who}" for who in ("ann", "eve")]
    for name in names:
        subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", name], check=True, timeout=30)
    try:
        yield {name: pwd.getpwnam(name).pw_uid for name in names}
    finally:
        for name in names:
            subprocess.run(["userdel", name], timeout=30, check=False)


def _hard_links(folder, i):
    """The issue's flood: every graded notebook a hard link to one big file (8 MiB here, read four times)."""
    big = folder.parent.parent / f"big{i}"
    big.write_bytes(os.urandom(8 * MIB))
    for nb in NOTEBOOKS:
        (folder / f"{nb}.ipynb").unlink()
        os.link(big, folder / f"{nb}.ipynb")


def _sparse_notebooks(folder, i):
    for nb in NOTEBOOKS[:2]:
        with open(folder / f"{nb}.ipynb", "r+b") as f:
            f.truncate(96 * MIB)                     # holes: read as zeros, every byte charged


def _big_files_beside(folder, i):
    for k in range(50):
        with open(folder / f"junk{k}.bin", "wb") as f:
            f.truncate(1 << 30)                      # never read: not a graded file


def _plain(folder, i):
    pass


def _not_a_folder(inbound, name, i):
    """Entries named as submissions that are no folder: a FIFO, a link to a big folder, a huge sparse file."""
    path = inbound / name
    os.rename(path, inbound.parent / f"moved{i}")
    if i % 3 == 0:
        os.mkfifo(path)
    elif i % 3 == 1:
        os.symlink(inbound.parent / f"moved{i}", path)
    else:
        with open(path, "wb") as f:
            f.truncate(1 << 40)


KINDS = {"hard links": _hard_links, "sparse notebooks": _sparse_notebooks, "big files beside": _big_files_beside,
         "many plain folders": _plain, "links, FIFOs and files": None}


@pytest.mark.parametrize("kind", KINDS)
def test_a_flood_costs_a_classmate_one_turn_whatever_it_is_made_of(kind, tmp_path, accounts, monkeypatch):
    ann, eve = accounts
    course = _course(tmp_path, 'c.FeedbackOnSubmit.limit = "1000/day"')
    inbound = tmp_path / "exchange/attention-course/inbound"
    flood = [submit_like_nbgrader(course, tmp_path, eve) for _ in range(FLOOD * (4 if kind == "many plain folders" else 1))]
    for i, name in enumerate(flood):
        if KINDS[kind] is None:
            _not_a_folder(inbound, name, i)
        else:
            KINDS[kind](inbound / name, i)
            _owned(inbound / name, accounts[eve])
        if KINDS[kind] is None:
            os.chown(inbound / name, accounts[eve], accounts[eve], follow_symlinks=False)
    mine = submit_like_nbgrader(course, tmp_path, ann)                  # the classmate, after all of eve's
    _owned(inbound / mine, accounts[ann])
    read, looked = [0], []
    real_read, real_examine = os.read, service_module.examine
    monkeypatch.setattr(os, "read", lambda fd, n: (data := real_read(fd, n), read.__setitem__(0, read[0] + len(data)))[0])
    monkeypatch.setattr(service_module, "examine", lambda fd, name, **kw: (looked.append(name), real_examine(fd, name, **kw))[1])
    monkeypatch.setattr(turns, "READ_WAIT", 60.0)          # the first pass waits for its readings: what it did is exact
    service, journal, said = _service(course, tmp_path)
    service.step()
    assert journal.state.entries[mine].published.kind == "feedback"         # the classmate's page, first pass
    assert service.grader.asked.count(eve) <= 1
    assert sum(name in flood for name in looked) <= turns.MAX_LOOKS          # eve's folders looked into: bounded
    one_submission = max(8 * MIB * 4, 2 * 96 * MIB) if kind in ("hard links", "sparse notebooks") else 4 * MIB
    assert read[0] <= 2 * one_submission + 4 * MIB, read[0]                   # one of eve's, read and graded
    for _ in range(20 * FLOOD):                                               # and every one of eve's is done
        if service.step() != 0.0 and all(journal.state.entries.get(n) and journal.state.entries[n].done for n in flood):
            break
    assert all(journal.state.entries[n].done for n in flood)


def test_hard_links_are_charged_to_the_account_as_read(tmp_path, accounts, monkeypatch):
    ann, eve = accounts
    monkeypatch.setattr(turns, "READ_WAIT", 60.0)
    course = _course(tmp_path)
    inbound = tmp_path / "exchange/attention-course/inbound"
    name = submit_like_nbgrader(course, tmp_path, eve)
    _hard_links(inbound / name, 0)
    _owned(inbound / name, accounts[eve])
    service, journal, said = _service(course, tmp_path)
    service.step()
    charged = service.ledger.recent(f"account:{eve}", __import__("time").time())
    assert 4 * 8 * MIB <= charged < 4 * 8 * MIB + MIB                       # one file, four names: four readings


def _candidate(owner, changed):
    return turns.Candidate(f"{owner}+{A}+{changed}", Name(owner, A, str(changed)), owner, changed)


def test_owners_take_turns_least_read_first_then_earliest():
    ledger = turns.Ledger(window=100.0)
    waiting = {o: [_candidate(o, t)] for o, t in (("eve", 1.0), ("mal", 2.0), ("ann", 3.0), ("bob", 4.0))}
    assert turns.order(waiting, ledger, 10.0) == ["eve", "mal", "ann", "bob"]      # nothing read: by arrival
    ledger.charge("eve", 252 * MIB, 10.0)
    ledger.charge("mal", 4 * MIB, 10.0)
    assert turns.order(waiting, ledger, 11.0) == ["ann", "bob", "mal", "eve"]
    assert turns.order(waiting, ledger, 200.0) == ["eve", "mal", "ann", "bob"]     # the window has passed


def test_a_pass_never_waits_for_another_account_s_reading(tmp_path, accounts, monkeypatch):
    """Eve's reading is under way (held here until released): the classmate's submission, read meanwhile, is
    graded and published in that pass; eve's is graded once read, in a later pass."""
    import threading
    ann, eve = accounts
    course = _course(tmp_path)
    inbound = tmp_path / "exchange/attention-course/inbound"
    theirs = submit_like_nbgrader(course, tmp_path, eve)
    _owned(inbound / theirs, accounts[eve])
    mine = submit_like_nbgrader(course, tmp_path, ann)
    _owned(inbound / mine, accounts[ann])
    monkeypatch.setattr(turns, "READ_WAIT", 2.0)
    service, journal, said = _service(course, tmp_path)
    release, real = threading.Event(), service.reader.read
    service.reader.read = lambda name, found, budget: (release.wait(60) if name == theirs else None,
                                                        real(name, found, budget))[1]
    service.step()
    assert service.grader.asked == [ann] and journal.state.entries[mine].published.kind == "feedback"
    assert service.reader.busy(f"account:{eve}")
    release.set()
    for _ in range(200):
        service.step()
        if service.grader.asked == [ann, eve]:
            break
    assert service.grader.asked == [ann, eve] and journal.state.entries[theirs].published.kind == "feedback"
