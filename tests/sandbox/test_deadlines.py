"""Every exchange with a worker has a deadline, both ways (issue 35, item 1).

A worker whose student code stops it reading its socket got its reply out, and the grader's next request
(a cell of 2 MiB, a call with large arguments) then waited in one blocking write of the whole frame, for
ever: ``grade`` never ended and ``watch`` served nobody. A write now takes only what the socket has room
for and checks its deadline between writes; a worker that misses it is ended (``WorkerDied``) and the
notebook goes on. Each test here hung on the old code (``pytest.mark.timeout`` ends it as a failure)."""
from __future__ import annotations

import os
import socket
import threading
import time

import numpy as np
import pytest

from autograder.intake import CodeCell
from autograder.run.sandboxed_student import SandboxedStudent
from autograder.sandbox import rpc
from autograder.sandbox.handle import WorkerDied, WorkerHandle
from autograder.sandbox.limits import Limits
from deaf_workers import BIG_CELL, STOPS_READING
from rpc_peer import DeafServer

MIB = 1 << 20
STOPPED = "stopped reading"
CELL = Limits(cell_seconds=2, call_seconds=2, total_seconds=20, spawns=2)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("size", [300 << 10, 2 * MIB, 32 * MIB])
def test_a_write_to_a_peer_that_never_reads_ends_at_its_deadline(size):
    ours, theirs = socket.socketpair()
    try:
        with pytest.raises(rpc.Deadline):
            rpc.send_all(ours.fileno(), bytes(size), time.monotonic() + 0.3)
        assert os.get_blocking(ours.fileno())                   # left as it was found
    finally:
        ours.close()
        theirs.close()


@pytest.mark.timeout(30)
def test_a_write_to_a_peer_that_reads_a_trickle_ends_at_its_deadline():
    """The deadline holds while bytes keep moving: a peer taking 4 KiB every 10 ms would take 5 s for
    2 MiB (the old write waited for all of it)."""
    ours, theirs = socket.socketpair()
    done = threading.Event()

    def trickle():
        while not done.is_set():
            try:
                theirs.recv(4096)
            except OSError:
                return
            time.sleep(0.01)
    threading.Thread(target=trickle, daemon=True).start()
    try:
        with pytest.raises(rpc.Deadline):
            rpc.send_all(ours.fileno(), bytes(2 * MIB), time.monotonic() + 0.3)
    finally:
        done.set()
        ours.close()
        theirs.close()


def test_a_write_to_a_peer_that_reads_arrives_whole():
    ours, theirs = socket.socketpair()
    got = bytearray()

    def read_all():
        while len(got) < 8 * MIB:
            got.extend(theirs.recv(MIB))
    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    data = os.urandom(8 * MIB)
    rpc.send_all(ours.fileno(), data, time.monotonic() + 30)
    reader.join(30)
    ours.close()
    theirs.close()
    assert bytes(got) == data


@pytest.mark.timeout(30)
@pytest.mark.parametrize("what", ["cell", "call"])
def test_a_forged_worker_that_never_reads_is_ended_at_the_deadline(tmp_path, what):
    server = DeafServer(tmp_path)
    handle = WorkerHandle(server, Limits())
    try:
        assert server.stopped.wait(10)
        with pytest.raises(WorkerDied, match=STOPPED):
            if what == "cell":
                handle.run_cell(BIG_CELL, 0.5)
            else:
                handle.call_many("f", [((np.zeros(MIB),), {"k": np.ones(MIB)})], 0.5)
    finally:
        handle.cleanup()
        server.close()


def _cells(*sources: str) -> list[CodeCell]:
    return [CodeCell("ex1_attention", i, s) for i, s in enumerate(sources)]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("stop", sorted(STOPS_READING))
def test_a_real_worker_that_stops_reading_before_a_big_cell_is_ended_and_the_notebook_goes_on(server, stop):
    """The cell of 2 MiB stops the first worker (skipped), and the small cell after it the second (which ran
    the stopping cell again): each within its deadline, each said in the events; the notebook ends."""
    student = SandboxedStudent(server, _cells("def f(x):\n    return x\n", STOPS_READING[stop], BIG_CELL,
                                              "def g(x):\n    return x\n"), ["f", "g"], CELL)
    student.close()
    assert any(STOPPED in e and "Cell 2 of" in e for e in student.events), student.events
    assert student.spawns == 2 and student.skip == {2, 3}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("stop", sorted(STOPS_READING))
def test_a_real_worker_that_stops_reading_before_a_call_with_big_arguments_is_ended(server, stop):
    student = SandboxedStudent(server, _cells("def f(*args):\n    return 1.0\n", STOPS_READING[stop]), ["f"],
                               Limits(cell_seconds=2, call_seconds=2, total_seconds=20, spawns=1))
    try:
        got = student.call_many("f", [(np.zeros(MIB), np.ones(MIB))])
    finally:
        student.close()
    assert STOPPED in str(got[0]) and "did not return" in str(got[0]), got
    assert any(STOPPED in e for e in student.events)


def test_a_worker_that_reads_takes_big_cells_and_arguments(server):
    """The same exchanges with a worker that reads: nothing is ended."""
    student = SandboxedStudent(server, _cells("def f(x):\n    return float(x.sum())\n", BIG_CELL), ["f"], CELL)
    try:
        got = student.call_many("f", [(np.ones(MIB),)])
    finally:
        student.close()
    assert got == [float(MIB)] and not student.events


@pytest.mark.timeout(60)
def test_the_fork_server_goes_on_serving_a_grader_that_does_not_read_its_replies(tmp_path, monkeypatch):
    """The fork server's replies have a deadline too: one its grader does not take is dropped (that grader
    gave up waiting for it), and the fork server goes on reading requests. It blocked in its send once its
    grader's queue was full, and the grader's next request then blocked as well."""
    from autograder.sandbox import forkserver
    monkeypatch.setattr(forkserver, "SEND_SECONDS", 0.001)
    grader, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)

    def serve():
        try:
            forkserver._serve(theirs, tmp_path, None, None)
        except OSError:                            # the grader hung up (``main`` leaves then, as here)
            pass
        finally:
            theirs.close()
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    grader.settimeout(10)
    r, w = os.pipe()
    try:
        for _ in range(1000):                      # refused requests: each gets a reply nobody reads
            socket.send_fds(grader, [b'{"op": "nothing"}'], [r, w])
    finally:
        grader.close()
        os.close(r)
        os.close(w)
    thread.join(10)
    assert not thread.is_alive()


def _output_reply(rid: int, header: dict) -> bytes:
    return rpc.encode_frame(rid, {"op": "output", "ok": True, "stdout": "out", "stderr": ""})


@pytest.mark.timeout(60)
def test_a_grader_holding_over_a_thousand_descriptors_talks_to_and_ends_its_workers(tmp_path):
    """A long-lived grader (formgrader's Jupyter server) may hold descriptors numbered past 1023, where
    select() refuses them (ValueError): every wait on a worker's socket or pidfd is a poll."""
    import resource
    from rpc_peer import handle_answering
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    held = [os.open(os.devnull, os.O_RDONLY)]
    try:
        while held[-1] < 1100:
            held.append(os.dup(held[0]))
        handle, server = handle_answering(tmp_path, _output_reply)
        try:
            assert min(handle.sock.fileno(), handle.pidfd) > 1023
            assert handle.request({"op": "output"}, 5)[0]["stdout"] == "out"
            handle.kill_now()
            handle._wait_ended(5)
        finally:
            handle.cleanup()
            server.close()
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
