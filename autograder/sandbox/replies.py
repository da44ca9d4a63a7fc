"""What a worker's reply must look like for each request (the worker is hostile: check it all).

``check_reply`` raises ``ProtocolError`` for anything that is not the reply to
this request: another request id, another op, a field of the wrong type. The
grader ends the worker on any violation.
"""
from __future__ import annotations

from .rpc import ProtocolError

MAX_TEXT = 1 << 20


def check_reply(request: dict, rid: int, got_rid: int, reply: dict) -> None:
    if got_rid != rid:
        raise ProtocolError("a reply to another request")
    if reply.get("op") != request["op"]:
        raise ProtocolError(f"a reply for op {str(reply.get('op'))[:20]!r} to op {request['op']!r}")
    if not isinstance(reply.get("ok"), bool):
        raise ProtocolError("a reply without a true/false 'ok'")
    if not reply["ok"]:
        _error(reply.get("error"), optional=False)
    else:
        _FIELDS[request["op"]](reply, request)
    if request["op"] == "run_cell" and "defined" in reply:    # also when the student's cell raised
        _functions(reply, request)


def _error(err, optional: bool) -> None:
    if err is None and optional:
        return
    if not (isinstance(err, dict) and all(_text(err.get(k)) for k in ("type", "message"))):
        raise ProtocolError("an error that is not {type, message}")


def _text(value) -> bool:
    return isinstance(value, str) and len(value) <= MAX_TEXT


def _hello(reply: dict, request: dict) -> None:
    status = reply.get("status")
    if not (isinstance(status, dict) and len(status) <= 64
            and all(_text(k) and _text(v) for k, v in status.items())):
        raise ProtocolError("a status that is not a table of texts")


def _run_cell(reply: dict, request: dict) -> None:
    _error(reply.get("error"), optional=True)


def _functions(reply: dict, request: dict) -> None:
    defined = reply.get("defined")
    if not (isinstance(defined, list) and all(_text(n) and n in request.get("names", ()) for n in defined)):
        raise ProtocolError("defined names that were not asked about")


def _output(reply: dict, request: dict) -> None:
    if not (_text(reply.get("stdout")) and _text(reply.get("stderr"))):
        raise ProtocolError("output that is not text")


def _call_many(reply: dict, request: dict) -> None:
    if not isinstance(reply.get("many"), dict):
        raise ProtocolError("results that are not an object")


_FIELDS = {"hello": _hello, "run_cell": _run_cell, "functions": _functions, "output": _output,
           "call_many": _call_many}
