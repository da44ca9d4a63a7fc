"""Frames and arrays on the wire between the grader and a sandboxed worker. Never pickle.

A frame is ``MAGIC | request id (8 bytes) | header length (4) | header JSON |
payload length (8) | payload``. The payload holds raw array bytes that the
header describes as ``{"dtype", "shape", "offset", "nbytes"}``. The reader
skips anything that is not a well-formed frame for the request it is waiting
for, so bytes a student writes into the socket cannot forge or wedge a reply.
Decoding accepts only plain numeric dtypes and checks every size.
"""
from __future__ import annotations

import json
import os
import select
import struct
import time

import numpy as np

MAGIC = b"\x93AGRPC1\x00"
MAX_HEADER = 1 << 20                  # 1 MiB of JSON
MAX_PAYLOAD = 256 << 20               # 256 MiB of array bytes per frame
ALLOWED_DTYPES = {np.dtype(t).str for t in
                  ("f8", "f4", "f2", "i8", "i4", "i2", "i1", "u8", "u4", "u2", "u1", "b1")}
_PREFIX = struct.Struct("<8sQI")      # magic, request id, header length


class ProtocolError(Exception):
    """The other side sent something that is not a valid reply."""


class PeerGone(Exception):
    """The other side closed the connection (it exited or was killed)."""


class Deadline(Exception):
    """No valid reply arrived in time."""


# --- encoding ----------------------------------------------------------------------------

def encode_frame(request_id: int, header: dict, payload: bytes = b"") -> bytes:
    head = json.dumps(header, separators=(",", ":")).encode()
    return _PREFIX.pack(MAGIC, request_id, len(head)) + head + struct.pack("<Q", len(payload)) + payload


def pack_arrays(values) -> tuple[list, bytes]:
    """Descriptors and one payload for a list of numeric numpy arrays."""
    chunks, descs, offset = [], [], 0
    for arr in values:
        data = arr.tobytes(order="C")                  # C order whatever the layout; keeps 0-d shapes
        descs.append({"dtype": arr.dtype.str, "shape": list(arr.shape), "offset": offset, "nbytes": len(data)})
        chunks.append(data)
        offset += len(data)
    return descs, b"".join(chunks)


def unpack_array(desc, payload: bytes) -> np.ndarray:
    """A fresh ndarray from a descriptor, after checking every field (the sender is untrusted)."""
    if not isinstance(desc, dict):
        raise ProtocolError("array descriptor is not an object")
    dtype, shape, offset, nbytes = (desc.get(k) for k in ("dtype", "shape", "offset", "nbytes"))
    if dtype not in ALLOWED_DTYPES:
        raise ProtocolError(f"dtype {str(dtype)[:20]!r} is not a plain numeric dtype")
    if not (isinstance(shape, list) and len(shape) <= 8
            and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s for s in shape)):
        raise ProtocolError("bad array shape")
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (offset, nbytes)):
        raise ProtocolError("bad array offset")
    dt = np.dtype(dtype)
    if int(np.prod(shape, dtype=object)) * dt.itemsize != nbytes or offset + nbytes > len(payload):
        raise ProtocolError("array size does not match its shape")
    return np.frombuffer(payload, dtype=dt, count=nbytes // dt.itemsize, offset=offset).reshape(shape).copy()


# --- reading -----------------------------------------------------------------------------

class FrameReader:
    """Buffered reader of frames from a socket or pipe fd, with a deadline."""

    def __init__(self, fd: int, max_buffer: int = MAX_PAYLOAD + MAX_HEADER + 64):
        self.fd = fd
        self.buf = bytearray()
        self.max_buffer = max_buffer

    def read(self, want_id: int | None, deadline: float | None) -> tuple[int, dict, bytes]:
        """The next valid frame (for ``want_id`` when given); junk in between is dropped."""
        while True:
            frame = self._parse(want_id)
            if frame is not None:
                return frame
            self._fill(deadline)

    def _fill(self, deadline):
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            raise Deadline()
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:
            raise PeerGone()
        self.buf += chunk
        if len(self.buf) > self.max_buffer:        # a flood of junk: keep only the tail
            del self.buf[: len(self.buf) - self.max_buffer // 2]

    def _parse(self, want_id):
        """Try every MAGIC in the buffer: a junk prefix cannot hide a real frame behind it."""
        pos = self.buf.find(MAGIC)
        while pos >= 0:
            parsed = self._frame_at(pos)
            if parsed is not None and (want_id is None or parsed[0] == want_id):
                rid, header, payload, end = parsed
                del self.buf[:end]
                return rid, header, payload
            pos = self.buf.find(MAGIC, pos + 1)
        return None

    def _frame_at(self, pos):
        """(id, header, payload, end) for a complete, well-formed frame at ``pos``, else None."""
        if len(self.buf) < pos + _PREFIX.size:
            return None
        _, rid, hlen = _PREFIX.unpack_from(self.buf, pos)
        end_head = pos + _PREFIX.size + hlen
        if hlen > MAX_HEADER or len(self.buf) < end_head + 8:
            return None
        (plen,) = struct.unpack_from("<Q", self.buf, end_head)
        end = end_head + 8 + plen
        if plen > MAX_PAYLOAD or len(self.buf) < end:
            return None
        try:
            header = json.loads(bytes(self.buf[pos + _PREFIX.size:end_head]))
        except ValueError:
            return None
        if not isinstance(header, dict):
            return None
        return rid, header, bytes(self.buf[end_head + 8:end]), end

    def drain(self) -> None:
        """Drop everything received so far and anything already waiting (junk between calls)."""
        self.buf.clear()
        while select.select([self.fd], [], [], 0)[0]:
            try:
                if not os.read(self.fd, 1 << 20):
                    return
            except OSError:
                return


def send_all(fd: int, data: bytes, deadline: float | None = None) -> None:
    view = memoryview(data)
    while view:
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        _, ready, _ = select.select([], [fd], [], timeout)
        if not ready:
            raise Deadline()
        try:
            sent = os.write(fd, view)
        except (BrokenPipeError, ConnectionResetError):
            raise PeerGone() from None
        view = view[sent:]
