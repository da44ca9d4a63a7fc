"""Fuzzing the RPC from the hostile side: random bytes, truncated, huge, forged and deeply nested frames,
floods. Nothing may escape except the reader's three errors (or WorkerDied from a handle), and every
example ends within a bounded time and memory."""
import json
import os
import resource
import socket
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.sandbox import rpc
from autograder.sandbox.limits import Limits
from autograder.sandbox.handle import WorkerDied, WorkerHandle
from rpc_peer import FakeServer, handle_answering

READER_ERRORS = (rpc.ProtocolError, rpc.PeerGone, rpc.Deadline)
SLACK = 5.0                         # seconds a read may overrun its deadline on a loaded machine

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=16)


def _read_all(data: bytes, seconds: float = 1.0):
    """Feed ``data`` to a reader, then hang up; return what it read or the error it raised."""
    ours, theirs = socket.socketpair()
    threading.Thread(target=lambda: (theirs.sendall(data), theirs.close()), daemon=True).start()
    reader, start, frames = rpc.FrameReader(ours.fileno()), time.monotonic(), []
    try:
        while True:
            frames.append(reader.read(time.monotonic() + seconds))
    except READER_ERRORS as exc:
        outcome = exc
    finally:
        ours.close()
    assert time.monotonic() - start < seconds * (len(frames) + 1) + SLACK
    return frames, outcome


def _frame(rid: int, head: bytes, plen: int, payload: bytes) -> bytes:
    return rpc.MAGIC + rid.to_bytes(8, "little") + len(head).to_bytes(4, "little") + head \
        + plen.to_bytes(8, "little") + payload


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=4096))
def test_random_bytes_only_raise_reader_errors(data):
    frames, outcome = _read_all(data)
    assert isinstance(outcome, READER_ERRORS)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(header=json_values, depth=st.integers(0, 20_000), plen=st.integers(0, 2**64 - 1),
       payload=st.binary(max_size=256), cut=st.integers(0, 64), rid=st.integers(0, 2**64 - 1))
def test_forged_truncated_and_nested_frames(header, depth, plen, payload, cut, rid):
    head = json.dumps({"h": header}).encode()
    head = b"[" * depth + head + b"]" * depth if depth % 3 else head
    frame = _frame(rid, head, plen, payload)
    frames, outcome = _read_all(frame[: len(frame) - cut] if cut % 2 else frame)
    assert isinstance(outcome, READER_ERRORS)
    for _got_rid, got_header, got_payload in frames:     # whatever was accepted is within the bounds
        assert isinstance(got_header, dict) and rpc.json_depth(json.dumps(got_header).encode()) <= rpc.MAX_DEPTH
        assert len(got_payload) <= rpc.MAX_PAYLOAD


def test_huge_header_and_payload_lengths_are_refused_before_reading():
    for frame in (_frame(1, b"{}", rpc.MAX_PAYLOAD + 1, b""),
                  rpc.MAGIC + (1).to_bytes(8, "little") + (rpc.MAX_HEADER + 1).to_bytes(4, "little")):
        _, outcome = _read_all(frame)
        assert isinstance(outcome, rpc.ProtocolError)


def test_deeply_nested_header_is_a_protocol_error_not_a_recursion_error():
    head = b"[" * 500_000 + b"]" * 500_000
    _, outcome = _read_all(_frame(1, head, 0, b""))
    assert isinstance(outcome, rpc.ProtocolError) and "deeper" in str(outcome)


def test_a_flood_of_bytes_still_meets_the_deadline(monkeypatch):
    """A frame whose payload never ends, sent as fast as the socket takes it: the absolute deadline
    holds even though data keeps arriving (a cap raised past reach so that only the deadline stops it)."""
    monkeypatch.setattr(rpc, "MAX_PAYLOAD", 1 << 62)
    ours, theirs = socket.socketpair()
    stop = threading.Event()

    def flood():
        theirs.sendall(_frame(1, b"{}", 1 << 61, b""))
        chunk = b"\x00" * 65536
        while not stop.is_set():
            try:
                theirs.sendall(chunk)
            except OSError:
                return
            time.sleep(0.0002)
    threading.Thread(target=flood, daemon=True).start()
    start = time.monotonic()
    with pytest.raises(rpc.Deadline):
        rpc.FrameReader(ours.fileno()).read(time.monotonic() + 0.5)
    stop.set()
    ours.close()
    assert time.monotonic() - start < 0.5 + SLACK


@pytest.mark.parametrize("shape", [[1 << 40], [0, 1 << 40], [2] * 9, [65536, 65536, 65536], [-1], [1.5], "x"])
def test_array_dimensions_are_capped_before_allocation(shape):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(rpc.ProtocolError):
        rpc.unpack_array({"dtype": "<f8", "shape": shape, "offset": 0, "nbytes": 0}, b"")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 << 10     # KiB


# --- whole replies, through the grader's WorkerHandle --------------------------------------------

descs = st.fixed_dictionaries({
    "dtype": st.sampled_from(["<f8", "<i4", "|O", "|b1", "x"]) | json_values,
    "shape": st.lists(st.integers(-2, 2**62) | st.sampled_from([0, 1, 2]), max_size=9) | json_values,
    "offset": st.integers(-1, 64) | json_values, "nbytes": st.integers(-1, 2**62) | st.sampled_from([0, 8, 16])})
trees = st.recursive(
    st.fixed_dictionaries({"kind": st.sampled_from(["array", "none", "str", "x"]),
                           "index": st.integers(-1, 3) | json_values}),
    lambda inner: st.fixed_dictionaries({"kind": st.sampled_from(["tuple", "list"]),
                                         "items": st.lists(inner, max_size=3) | json_values}),
    max_leaves=12)
items = st.fixed_dictionaries({"ok": st.booleans() | json_values, "tree": trees | json_values,
                               "error": json_values, "raised": st.booleans() | json_values})
many = st.fixed_dictionaries({"items": st.lists(items, max_size=3) | json_values,
                              "arrays": st.lists(descs, max_size=3) | json_values}) | json_values
replies = st.fixed_dictionaries({"op": st.sampled_from(["call_many", "hello", None]),
                                 "ok": st.booleans() | json_values, "many": many, "error": json_values})


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(reply=replies, payload=st.binary(max_size=64), same_id=st.booleans())
def test_forged_replies_fail_the_call_never_the_grader(tmp_path, reply, payload, same_id):
    answer = lambda rid, header: rpc.encode_frame(rid if same_id else rid ^ 1, reply, payload)  # noqa: E731
    handle, server = handle_answering(tmp_path, answer)
    try:
        start = time.monotonic()
        try:
            reply_back, outcomes = handle.call_many("f", [((1.0,), {}), ((2.0,), {})], 2.0)
        except WorkerDied as exc:
            assert str(exc)
        else:
            assert len(outcomes) == 2 or (not reply_back["ok"] and isinstance(reply_back["error"]["message"], str))
            assert all(o[0] in ("ok", "raised", "refused") for o in outcomes)
        assert time.monotonic() - start < 2.0 + SLACK
    finally:
        handle.cleanup()
        server.close()


def test_reply_to_another_request_ends_the_worker(tmp_path):
    answer = lambda rid, header: rpc.encode_frame(rid ^ 1, {"op": "call_many", "ok": True})  # noqa: E731
    handle, server = handle_answering(tmp_path, answer)
    try:
        with pytest.raises(WorkerDied, match="another request"):
            handle.call_many("f", [((1.0,), {})], 2.0)
        assert server.procs[0].wait(timeout=10) is not None          # the worker was killed
    finally:
        handle.cleanup()
        server.close()


def test_a_worker_that_fails_its_hello_leaves_no_descriptor_open(tmp_path):
    before = set(os.listdir("/proc/self/fd"))
    server = FakeServer(tmp_path, answer=None, first=lambda rid, header: b"not a frame at all....")
    try:
        with pytest.raises(WorkerDied, match="broke the protocol"):
            WorkerHandle(server, Limits())
    finally:
        server.close()
    deadline = time.monotonic() + 5
    while set(os.listdir("/proc/self/fd")) - before and time.monotonic() < deadline:
        time.sleep(0.05)                                 # the fake worker's thread closes its end
    assert set(os.listdir("/proc/self/fd")) - before == set()


@pytest.mark.parametrize("ok", [True, False])
@pytest.mark.parametrize("defined", [["softmax", "os"], "softmax", [1], [["softmax"]], {"softmax": 1}])
def test_a_cell_reply_naming_what_was_not_asked_about_ends_the_worker(tmp_path, ok, defined):
    """A run_cell reply says which of the asked names the notebook defines; anything else in it (a name
    not asked about, not a list of texts) is a protocol violation, also when the cell raised."""
    error = None if ok else {"type": "ValueError", "message": "the student's"}
    answer = lambda rid, header: rpc.encode_frame(  # noqa: E731
        rid, {"op": "run_cell", "ok": ok, "error": error, "defined": defined})
    handle, server = handle_answering(tmp_path, answer)
    try:
        with pytest.raises(WorkerDied, match="broke the protocol"):
            handle.run_cell("x = 1", 2.0, ["softmax", "causal_mask"])
    finally:
        handle.cleanup()
        server.close()


def test_a_cell_reply_naming_what_was_asked_about_is_taken(tmp_path):
    answer = lambda rid, header: rpc.encode_frame(  # noqa: E731
        rid, {"op": "run_cell", "ok": True, "error": None, "defined": ["softmax"]})
    handle, server = handle_answering(tmp_path, answer)
    try:
        assert handle.run_cell("x = 1", 2.0, ["softmax", "causal_mask"])["defined"] == ["softmax"]
    finally:
        handle.cleanup()
        server.close()
