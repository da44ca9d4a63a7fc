"""The wire format: reading is strict and bounded, and decoding trusts nothing."""
import os
import socket
import sys

import numpy as np
import pytest

from autograder.sandbox import layers, rpc
from autograder.sandbox.convert import decode_many, encode_results


def _pair():
    a, b = socket.socketpair()
    return a, b, rpc.FrameReader(a.fileno())


def test_roundtrip_arrays_and_scalars():
    value = (np.arange(6.0).reshape(2, 3), np.float32(2.5), 7, [1.0, 2.0], None, "text")
    reply, payload = encode_results([("ok", value)], 1 << 20)
    [(kind, out)] = decode_many(reply, payload, 1)
    assert kind == "ok"
    np.testing.assert_array_equal(out[0], value[0])
    assert out[1].shape == () and out[1] == 2.5 and out[2] == 7 and out[3][1] == 2.0
    assert out[4] is None and out[5] == "<a string>"


def test_junk_before_a_frame_is_a_protocol_error():
    a, b, reader = _pair()
    b.sendall(b"junk" + rpc.encode_frame(5, {"ok": 2}))
    with pytest.raises(rpc.ProtocolError, match="not a frame"):
        reader.read(None)


def test_frames_are_read_back_to_back():
    a, b, reader = _pair()
    b.sendall(rpc.encode_frame(99, {"ok": 1}) + rpc.encode_frame(5, {"ok": 2}, b"xyz"))
    assert reader.read(None) == (99, {"ok": 1}, b"")
    assert reader.read(None) == (5, {"ok": 2}, b"xyz")


def test_prefix_claiming_huge_payload_times_out_instead_of_waiting():
    import time
    a, b, reader = _pair()
    fake = rpc.MAGIC + (7).to_bytes(8, "little") + (2).to_bytes(4, "little") + b"{}" + (100_000).to_bytes(8, "little")
    b.sendall(fake + rpc.encode_frame(7, {"real": True}))
    with pytest.raises(rpc.Deadline):
        reader.read(time.monotonic() + 0.2)


def test_deadline_and_peer_gone():
    a, b, reader = _pair()
    import time
    with pytest.raises(rpc.Deadline):
        reader.read(time.monotonic() + 0.05)
    b.close()
    with pytest.raises(rpc.PeerGone):
        reader.read(time.monotonic() + 1)


@pytest.mark.parametrize("desc", [
    {"dtype": "|O", "shape": [1], "offset": 0, "nbytes": 8},
    {"dtype": "<f8", "shape": [2], "offset": 0, "nbytes": 8},
    {"dtype": "<f8", "shape": [-1], "offset": 0, "nbytes": 8},
    {"dtype": "<f8", "shape": [1], "offset": 4, "nbytes": 8},
    {"dtype": "<f8", "shape": [True], "offset": 0, "nbytes": 8},
    "not a dict",
])
def test_bad_descriptors_refused(desc):
    with pytest.raises(rpc.ProtocolError):
        rpc.unpack_array(desc, b"\x00" * 8)


def test_worker_refuses_subclasses_objects_and_huge_results():
    class Sub(np.ndarray):
        pass
    def outcome(value):
        reply, payload = encode_results([("ok", value)], 1 << 20)
        return decode_many(reply, payload, 1)[0]
    for bad in (np.zeros(2).view(Sub), np.array([None]), object(), {"a": 1}):
        assert outcome(bad)[0] == "refused"
    refused = outcome(np.zeros(1 << 18))
    assert refused[0] == "refused" and "MiB" in refused[2]


def test_sandbox_read_paths_hide_this_project(tmp_path, monkeypatch):
    site = tmp_path / "lib" / "python3" / "site-packages"
    (site / "solutions").mkdir(parents=True)
    (site / "numpy").mkdir()
    (site / "autograder-0.1.dist-info").mkdir()
    monkeypatch.setattr(sys, "path", [*sys.path, str(site)])
    layers.read_paths.cache_clear()
    try:
        paths = layers.read_paths()
    finally:
        layers.read_paths.cache_clear()
    assert str(site / "numpy") in paths and str(site / "solutions") not in paths and str(site) not in paths
    root = os.path.dirname(os.path.dirname(os.path.abspath(layers.__file__)))
    assert not any(p == root or p.startswith(os.path.join(root, "solutions")) for p in paths)


def test_many_results_in_one_frame():
    results = [("ok", 12), ("error", {"type": "ValueError", "message": "bad n"}), ("ok", np.zeros(1 << 18)),
               ("ok", (np.ones(2), 3.0))]
    reply, payload = encode_results(results, 1 << 20)
    out = decode_many(reply, payload, 4)
    assert out[0] == ("ok", 12) or (out[0][0] == "ok" and out[0][1] == 12)
    assert out[1][:3] == ("raised", "ValueError", "bad n")
    assert out[2][0] == "refused" and "MiB" in out[2][2]
    assert out[3][0] == "ok" and out[3][1][0].tolist() == [1.0, 1.0] and out[3][1][1] == 3.0


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "longdouble", ">f8", ">f4", "int8", "uint16",
                                   ">i4", "int64", "uint64", "bool"])
def test_every_real_numpy_dtype_travels_as_in_process(dtype):
    """float16 to long double (float128) and every integer dtype, in either byte order, reach the grader
    with their values (a long double as float64, which is what the grader reads it as in-process too)."""
    values = np.array([[0, 1, 2], [3, 4, 126]]).astype(dtype)
    reply, payload = encode_results([("ok", values), ("ok", values[0, 1]), ("ok", (values, values))], 1 << 20)
    out = decode_many(reply, payload, 3)
    assert [o[0] for o in out] == ["ok", "ok", "ok"]
    assert out[0][1].tolist() == values.astype(float).tolist() and float(out[1][1]) == 1.0
    assert out[0][1].dtype.isnative and out[0][1].dtype.kind == values.dtype.kind


def test_complex_results_are_refused_with_what_to_return():
    reply, payload = encode_results([("ok", np.ones(2, complex))], 1 << 20)
    outcome = decode_many(reply, payload, 1)[0]
    assert outcome[0] == "refused" and "complex" in outcome[2] and "real numbers" in outcome[2]


def test_an_echoed_call_sends_its_arguments_back_as_they_are_after_it():
    """What lets the grader see an argument changed in place in the sandbox: plain arrays, compared there."""
    from autograder.sandbox.convert import encode_calls
    from autograder.sandbox.worker import _call_many_fn

    def scales_in_place(x, k):
        x *= k
        return x.sum()
    encoded, payload = encode_calls([((np.ones(3), 2.0), {})])
    out = list(_call_many_fn(scales_in_place, [{**encoded[0], "echo": True}], payload, {}))
    assert out[0] == ("ok", 6.0) and out[1][0] == "ok"
    assert out[1][1][0].tolist() == [2.0, 2.0, 2.0] and out[1][1][1] == 2.0
    assert len(list(_call_many_fn(scales_in_place, encoded, payload, {}))) == 1     # no echo unless asked
