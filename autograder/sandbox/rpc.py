"""Frames and arrays on the wire between the grader and a sandboxed worker. Never pickle.

A frame is ``MAGIC | request id (8 bytes) | header length (4) | header JSON |
payload length (8) | payload``. The payload holds raw array bytes that the
header describes as ``{"dtype", "shape", "offset", "nbytes"}``.

The peer is hostile (student code shares the worker's process and can write
into the socket, or stop reading it). So reading is strict and bounded: a
frame must start where the previous one ended, every read and every write has
an absolute deadline (also while bytes keep moving: a write never waits for a
peer that does not read), header and payload lengths are capped before
anything is read, the header's nesting depth is checked without recursion
before it is parsed, and array shapes are capped before anything is
allocated. Any violation is a ``ProtocolError``; the grader then ends that
worker.
"""
from __future__ import annotations

import json
import os
import re
import select
import struct
import time

import numpy as np

MAGIC = b"\x93AGRPC1\x00"
MAX_HEADER = 1 << 20                  # 1 MiB of JSON
MAX_DEPTH = 16                        # nesting of objects and lists in a header
MAX_PAYLOAD = 256 << 20               # 256 MiB of array bytes per frame
MAX_NDIM = 8
MAX_DIM = 1 << 28                     # any one dimension
MAX_ELEMENTS = MAX_PAYLOAD            # elements of one array (itemsize >= 1)
ALLOWED_DTYPES = {np.dtype(t).str for t in
                  ("f8", "f4", "f2", "i8", "i4", "i2", "i1", "u8", "u4", "u2", "u1", "b1")}
_DTYPES = {name: np.dtype(name) for name in ALLOWED_DTYPES}
_PREFIX = struct.Struct("<8sQI")      # magic, request id, header length
_PLEN = struct.Struct("<Q")
_ESCAPE = re.compile(rb"\\.", re.DOTALL)           # a backslash and the byte it escapes
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")


class ProtocolError(Exception):
    """The other side sent something that is not a valid frame or reply."""


class PeerGone(Exception):
    """The other side closed the connection (it exited or was killed)."""


class Deadline(Exception):
    """No complete reply arrived in time."""


# --- encoding ----------------------------------------------------------------------------

def encode_frame(request_id: int, header: dict, payload: bytes = b"") -> bytes:
    head = json.dumps(header, separators=(",", ":"), allow_nan=False).encode()
    return _PREFIX.pack(MAGIC, request_id, len(head)) + head + _PLEN.pack(len(payload)) + payload


def pack_arrays(values) -> tuple[list, bytes]:
    """Descriptors and one payload for a list of numeric numpy arrays."""
    chunks, descs, offset = [], [], 0
    for arr in values:
        data = arr.tobytes(order="C")                  # C order whatever the layout; keeps 0-d shapes
        descs.append({"dtype": arr.dtype.str, "shape": list(arr.shape), "offset": offset, "nbytes": len(data)})
        chunks.append(data)
        offset += len(data)
    return descs, b"".join(chunks)


# --- decoding ----------------------------------------------------------------------------

def parse_header(raw: bytes) -> dict:
    """A JSON object of bounded size and depth (checked by a flat scan before json parses it)."""
    if len(raw) > MAX_HEADER:
        raise ProtocolError(f"header of {len(raw)} bytes exceeds {MAX_HEADER}")
    if json_depth(raw) > MAX_DEPTH:
        raise ProtocolError(f"header nested deeper than {MAX_DEPTH}")
    try:
        header = json.loads(raw, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"header is not valid JSON ({str(exc)[:80]})") from None
    if not isinstance(header, dict):
        raise ProtocolError("header is not a JSON object")
    return header


def json_depth(raw: bytes) -> int:
    """The deepest nesting of [ and { outside strings, in linear time and without recursion."""
    unescaped = _ESCAPE.sub(b"", raw)                     # after this every quote opens or closes a string
    outside = b"".join(unescaped.split(b'"')[::2])
    brackets = np.frombuffer(outside.translate(None, _NOT_BRACKET), dtype=np.uint8)
    if not brackets.size:
        return 0
    steps = np.where((brackets == 0x5B) | (brackets == 0x7B), 1, -1)
    return int(np.cumsum(steps).max())


def _no_constant(name: str):
    raise ValueError(f"{name} is not allowed")


def unpack_array(desc, payload: bytes) -> np.ndarray:
    """A fresh ndarray from a descriptor, after checking every field (``check_array``)."""
    dt, shape, offset, elements = check_array(desc, payload)
    return np.frombuffer(payload, dtype=dt, count=elements, offset=offset).reshape(shape).copy()


def check_array(desc, payload: bytes) -> tuple[np.dtype, list, int, int]:
    """(dtype, shape, offset, elements) of a descriptor, after checking every field (the sender is
    untrusted); nothing is allocated. Every number must be exactly an int (``type(v) is int``: what JSON
    gives; never a bool)."""
    if type(desc) is not dict:
        raise ProtocolError("array descriptor is not an object")
    dtype, shape, offset, nbytes = desc.get("dtype"), desc.get("shape"), desc.get("offset"), desc.get("nbytes")
    dt = _DTYPES.get(dtype) if type(dtype) is str else None
    if dt is None:
        raise ProtocolError(f"dtype {str(dtype)[:20]!r} is not a plain numeric dtype")
    elements = _check_shape(shape)
    if not (type(offset) is int and type(nbytes) is int and 0 <= offset <= MAX_PAYLOAD and 0 <= nbytes <= MAX_PAYLOAD):
        raise ProtocolError("bad array offset or size")
    if elements * dt.itemsize != nbytes or offset + nbytes > len(payload):
        raise ProtocolError("array size does not match its shape")
    return dt, shape, offset, elements


def _check_shape(shape) -> int:
    """At most MAX_NDIM dimensions, each at most MAX_DIM, at most MAX_ELEMENTS in all; the element count."""
    if type(shape) is not list or len(shape) > MAX_NDIM:
        raise ProtocolError("bad array shape")
    elements, largest = 1, 0
    for s in shape:
        if type(s) is not int or not 0 <= s <= MAX_DIM:
            raise ProtocolError("bad array shape")
        elements *= s                                 # Python ints: no overflow
        largest = max(largest, s)
    if elements > MAX_ELEMENTS:
        raise ProtocolError("array has too many elements")
    if elements == 0 and largest > MAX_DIM // 1024:
        raise ProtocolError("empty array with a huge dimension")
    return elements


# --- reading -----------------------------------------------------------------------------

class FrameReader:
    """Reads whole frames from a socket or pipe fd, strictly, before an absolute deadline."""

    def __init__(self, fd: int):
        self.fd = fd

    def read(self, deadline: float | None, most: int | None = None) -> tuple[int, dict, bytes | bytearray]:
        """(request id, header, payload) of the next frame; ProtocolError if it is malformed or its payload
        is longer than ``most`` bytes (MAX_PAYLOAD at most): of a payload too long not a byte is read."""
        magic, rid, hlen = _PREFIX.unpack(self._exact(_PREFIX.size, deadline))
        if magic != MAGIC:
            raise ProtocolError("bytes that are not a frame")
        if hlen > MAX_HEADER:
            raise ProtocolError(f"header of {hlen} bytes exceeds {MAX_HEADER}")
        head = self._exact(hlen + _PLEN.size, deadline)
        (plen,) = _PLEN.unpack_from(head, hlen)
        cap = MAX_PAYLOAD if most is None else min(most, MAX_PAYLOAD)
        if plen > cap:
            raise ProtocolError(f"payload of {plen} bytes exceeds the {cap} this reply may have")
        header = parse_header(bytes(head[:hlen]))
        return rid, header, self._exact(plen, deadline)         # not copied: a result may be 256 MiB

    def _exact(self, n: int, deadline: float | None) -> bytearray:
        buf = bytearray()
        while len(buf) < n:
            wait_for(self.fd, select.POLLIN, deadline)      # checked even while bytes keep arriving
            try:
                chunk = os.read(self.fd, min(n - len(buf), 1 << 20))
            except (BlockingIOError, InterruptedError):
                continue                             # a non-blocking descriptor with nothing after all
            if not chunk:
                raise PeerGone()
            buf += chunk
        return buf


def send_all(fd: int, data: bytes, deadline: float | None = None) -> None:
    """Write ``data`` whole before ``deadline`` (``Deadline`` otherwise; ``PeerGone`` when the peer closed).

    The descriptor is non-blocking while it is written, so each write takes only what the peer's buffer
    has room for and the deadline is checked between writes: a peer that stops reading (student code can
    make its worker do that) costs at most the deadline. A blocking write of the whole rest of a frame
    waited until the peer read it all, for ever if it never did (issue 35, item 1)."""
    view = memoryview(data)
    blocking = os.get_blocking(fd)
    os.set_blocking(fd, False)
    try:
        while view:
            wait_for(fd, select.POLLOUT, deadline)
            try:
                sent = os.write(fd, view)
            except (BlockingIOError, InterruptedError):
                continue                              # no room after all: wait again, deadline checked
            except (BrokenPipeError, ConnectionResetError):
                raise PeerGone() from None
            view = view[sent:]
    finally:
        os.set_blocking(fd, blocking)


def readable(fd, seconds: float = 0.0) -> bool:
    """Whether ``fd`` (a descriptor or a socket) is readable, or its peer hung up, within ``seconds``; with
    poll, as ``wait_for`` (a pidfd is readable once its process ended)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(max(int(seconds * 1000), 0)))


def wait_for(fd: int, event: int, deadline: float | None) -> None:
    """Until ``fd`` is ready for ``event`` (POLLIN, POLLOUT) or its peer hung up; ``Deadline`` past
    ``deadline``, checked before every wait. poll, not select: a descriptor may be numbered past 1023
    (a long-lived grader such as formgrader's Jupyter server holds many)."""
    timeout = None if deadline is None else deadline - time.monotonic()
    if timeout is not None and timeout <= 0:
        raise Deadline()
    poller = select.poll()
    poller.register(fd, event)
    if not poller.poll(None if timeout is None else max(int(timeout * 1000) + 1, 1)):
        raise Deadline()
