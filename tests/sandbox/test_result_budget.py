"""The grader accepts a bounded number of bytes of results from one submission, however many calls it
makes (issue 29, item 2): each result is capped at 64 MiB by the worker and each frame at 256 MiB by the
reader, but a submission whose every function returned 64 MiB made its grading process receive about
800 MB. Now each notebook may return its share of ``Limits.received_bytes`` (256 MiB) in all, counted in
the grading process on the frames it reads; past it a result is refused as an oversized one is (the check
fails and says why; no review flag), and a worker that sends more than it was told is left is not read."""
import os
import time
import tracemalloc

import numpy as np
import pytest

from autograder.assignment import FUNCTIONS, NOTEBOOKS
from autograder.intake import CodeCell
from autograder.run.hardened import grade_submission
from autograder.run.sandboxed_student import SandboxedStudent
from autograder.sandbox import rpc
from autograder.sandbox.handle import WorkerDied
from autograder.sandbox.limits import Limits, Received
from autograder.samples.synthetic import write_submission
from conftest import RELEASE, ROOT, SOURCE
from rpc_peer import handle_answering

MIB = 1 << 20
TOO_MUCH = "more data than the grader accepts"


def _one_mib_reply(rid: int, header: dict) -> bytes:
    """A well-formed reply of one 1 MiB result, whatever the grader said it still accepts."""
    desc = {"dtype": "<f8", "shape": [MIB // 8], "offset": 0, "nbytes": MIB}
    many = {"items": [{"ok": True, "tree": {"kind": "array", "index": 0}}], "arrays": [desc]}
    return rpc.encode_frame(rid, {"op": header["op"], "ok": True, "many": many, "stdout": "", "stderr": "",
                                  "told": header.get("left")}, bytes(MIB))


class CountingOs:
    """``os`` for the RPC module, counting the bytes its readers take from a socket."""

    def __init__(self):
        self.read_bytes = 0

    def __getattr__(self, name):
        return getattr(os, name)

    def read(self, fd, n):
        data = os.read(fd, n)
        self.read_bytes += len(data)
        return data


@pytest.mark.parametrize("op", ["call_many", "output"])
def test_a_reply_longer_than_the_grader_accepts_is_not_read(tmp_path, monkeypatch, op):
    """A forged worker answers with 1 MiB of payload where 256 KiB are left of the notebook's budget (a
    result) or where no payload belongs (its printed output): it is ended and the payload never read."""
    handle, server = handle_answering(tmp_path, _one_mib_reply)
    budget, counting = Received(256 << 10), CountingOs()
    monkeypatch.setattr(rpc, "os", counting)
    try:
        with pytest.raises(WorkerDied, match="payload of 1048576 bytes exceeds the (262144|0) "):
            if op == "call_many":
                handle.call_many("f", [((), {})], 10, received=budget)
            else:
                handle.request({"op": "output"}, 10)
    finally:
        handle.cleanup()
        server.close()
    assert counting.read_bytes < 64 << 10 and budget.left == 256 << 10      # the fake read the request too


def test_a_result_arriving_within_the_budget_is_charged_and_the_worker_told_what_is_left(tmp_path):
    handle, server = handle_answering(tmp_path, _one_mib_reply)
    budget = Received(3 * MIB)
    try:
        reply, outcomes = handle.call_many("f", [((), {})], 10, received=budget)
    finally:
        handle.cleanup()
        server.close()
    assert reply["told"] == 3 * MIB and outcomes[0][1].nbytes == MIB and budget.left == 2 * MIB


RETURNS_1_MIB = "import numpy as np\ndef big(*args, **kwargs):\n    return np.zeros(1 << 17)\n"


def test_a_notebook_returning_many_large_results_is_refused_past_its_share(server):
    """A real worker: 1 MiB results, a 4 MiB share. Four arrive; the rest are refused by the worker with a
    message, the worker lives on, nothing is flagged, and the grading process received 4 MiB."""
    limits = Limits(received_bytes=4 * MIB * len(NOTEBOOKS))
    student = SandboxedStudent(server, [CodeCell("ex1_attention", 0, RETURNS_1_MIB)], ["big"], limits)
    try:
        got = [student.call_many("big", [()])[0] for _ in range(6)] + student.call_many("big", [(), ()])
    finally:
        student.close()
    assert [isinstance(g, np.ndarray) for g in got] == [True] * 4 + [False] * 4
    assert all(TOO_MUCH in str(g) and "4 MiB of results in all" in str(g) for g in got[4:])
    assert student.received.left == 0 and student.spawns == 1 and not student.events


def test_a_submission_whose_every_function_returns_a_lot_is_bounded_in_bytes(server, tmp_path, monkeypatch):
    """Every function of every notebook returns 1 MiB, under a budget of 8 MiB for the submission: what
    the grading process reads from its workers (counted on the reader) stays within it, the checks say
    why they failed, and the record is not flagged (as for one oversized result)."""
    read, plain = [], rpc.FrameReader.read
    monkeypatch.setattr(rpc.FrameReader, "read", lambda self, *a: read.append(len((got := plain(self, *a))[2])) or got)
    killer = {f: RETURNS_1_MIB.replace("big", f) for f in sorted({f for names in FUNCTIONS.values() for f in names})}
    folder = write_submission(RELEASE, SOURCE, tmp_path / "submitted" / "greedy" / "ch04_attention", killer)
    start = time.monotonic()
    record = grade_submission(folder, course=ROOT, server=server, limits=Limits(received_bytes=8 * MIB))
    assert sum(read) <= 8 * MIB and sum(read) >= 4 * MIB, sum(read)
    assert any(TOO_MUCH in c.message for c in record.checks) and not record.needs_review
    assert time.monotonic() - start < 30


# --- issue 35, item 7: the budget is on what the grader holds once it reads a result, not on what arrived ----
# A result arrives in its own dtype and the grader reads it as float64 (``grading.student.to_array``): an int8
# or bool result takes 8 times its bytes on the wire. Counted on the wire, a notebook's share of int8 results
# became 8 times that share in the grader, and killed ``nbgrader autograde`` under a 2 GiB cap.

SMALL_DTYPES = ["int8", "uint8", "bool", "int16", "float16"]


def _returns(dtype: str, elements: int) -> str:
    return f"import numpy as np\ndef small(*args, **kwargs):\n    return np.ones({elements}, dtype=np.{dtype})\n"


@pytest.mark.parametrize("dtype", SMALL_DTYPES)
def test_small_dtypes_are_charged_what_the_grader_holds_once_read(server, dtype):
    """A real worker: results of 128 Ki numbers (128 KiB of int8, 1 MiB once read), a share of 4 MiB. Four
    arrive and the rest are refused with the budget's message; what the grader holds once it has read every
    result that arrived, as its checks read them (float64), measured with tracemalloc, is within the share.
    Counted on the wire, all six arrived (6 MiB once read)."""
    from autograder.grading.student import to_array
    limits = Limits(received_bytes=4 * MIB * len(NOTEBOOKS))
    student = SandboxedStudent(server, [CodeCell("ex1_attention", 0, _returns(dtype, 1 << 17))], ["small"], limits)
    try:
        got = [student.call_many("small", [()])[0] for _ in range(6)]
    finally:
        student.close()
    assert [isinstance(g, np.ndarray) for g in got] == [True] * 4 + [False] * 2, got
    assert all(TOO_MUCH in str(g) and "4 MiB of results in all" in str(g) for g in got[4:])
    assert student.received.left == 0 and not student.events
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        held = [to_array(g, "the result") for g in got if isinstance(g, np.ndarray)]
        grew = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(held) == 4 and grew <= 4 * MIB + (64 << 10), grew


def _int8_reply(rid: int, header: dict) -> bytes:
    """A forged reply: 1 Mi numbers of int8 (1 MiB on the wire, 8 MiB once read), whatever it was told."""
    desc = {"dtype": "|i1", "shape": [MIB], "offset": 0, "nbytes": MIB}
    many = {"items": [{"ok": True, "tree": {"kind": "array", "index": 0}}], "arrays": [desc]}
    return rpc.encode_frame(rid, {"op": header["op"], "ok": True, "many": many}, bytes(MIB))


def test_a_forged_worker_sending_small_dtypes_past_what_is_left_once_read_is_ended(tmp_path):
    """2 MiB left: the 1 MiB payload is read (it fits), but its 8 MiB once read do not; the worker is ended
    (it was told what is left), nothing is decoded and nothing charged."""
    handle, server = handle_answering(tmp_path, _int8_reply)
    budget = Received(2 * MIB)
    try:
        with pytest.raises(WorkerDied, match=f"results that take {8 * MIB} bytes once read, more than the {2 * MIB} left"):
            handle.call_many("f", [((), {})], 10, received=budget)
    finally:
        handle.cleanup()
        server.close()
    assert budget.left == 2 * MIB


def test_one_result_is_capped_on_what_the_grader_holds_once_read():
    """``Limits.result_bytes`` too: 64 Mi int8 numbers are 64 MiB on the wire and 512 MiB once read."""
    from autograder.sandbox.convert import decode_many, encode_results
    reply, payload = encode_results([("ok", np.ones(1 << 20, np.int8)), ("ok", np.ones(1 << 17, bool))], 1 * MIB)
    refused, taken = decode_many(reply, payload, 2)
    assert refused[0] == "refused" and "the result takes 8 MiB as the grader reads it" in refused[2]
    assert taken[0] == "ok" and taken[1].dtype == bool and taken[1].size == 1 << 17


def test_a_batch_of_answers_is_screened_as_each_is_read_so_the_worker_never_holds_them_all():
    """One round trip asks a function many questions (teaching's batches): each answer is checked against the
    result cap and the notebook's budget as it is read, and a refused one is let go there. Before, the worker
    kept every answer of the batch until it encoded the reply: 64 Mi int8 numbers an answer took a worker under
    nbgrader's door past its memory limit ("the worker process ended") instead of being refused by its size."""
    from autograder.sandbox.convert import Screen
    from autograder.sandbox.worker import _call_many_fn
    calls = [{"args": [], "kwargs": {}} for _ in range(6)]
    big = _call_many_fn(lambda: np.ones(8 * MIB, dtype=np.int8), calls, b"", {}, None, Screen(32 * MIB, None))
    assert [kind for kind, _ in big] == ["refused"] * 6          # 64 MiB each once read as float64
    assert all("the result takes 64 MiB as the grader reads it" in said["message"] for _, said in big)
    shared = _call_many_fn(lambda: np.ones(MIB), calls, b"", {}, None, Screen(64 * MIB, (20 * MIB, 256 * MIB)))
    assert [kind for kind, _ in shared] == ["ok", "ok", "refused", "refused", "refused", "refused"]
    assert TOO_MUCH in shared[2][1]["message"]                   # 8 MiB an answer: two fit in 20 MiB


ONE_THEN_INT8 = """import numpy as np
calls = []
def small(*args, **kwargs):
    calls.append(1)
    return np.ones(1 << 20) if len(calls) == 1 else np.ones(8 << 20, dtype=np.int8)
"""


def test_one_answer_as_large_as_the_notebooks_share_is_told_its_own_size(server):
    """A real worker under the default limits (64 MiB a notebook): 8 MiB of float64, then one 8 MiB int8 answer
    (64 MiB once read). The student reads that answer's size and that it alone is as much as a notebook may
    return, not that "the notebook's functions have returned more data" than 64 MiB in all."""
    student = SandboxedStudent(server, [CodeCell("ex1_attention", 0, ONE_THEN_INT8)], ["small"], Limits())
    try:
        first, second = (student.call_many("small", [()])[0] for _ in range(2))
    finally:
        student.close()
    assert isinstance(first, np.ndarray) and not isinstance(second, np.ndarray)
    assert str(second).endswith(": the result takes 64 MiB as the grader reads it (8 bytes a number), as much as "
                                  "the grader accepts from one notebook's functions in all (64 MiB); return only the arrays the exercise asks "
                                  "for"), str(second)
    assert TOO_MUCH not in str(second)


def test_past_what_is_left_the_answer_says_its_size_and_what_was_left():
    """Past the notebook's share, the refusal names this answer's size and what was left, in KiB below 1 MiB."""
    from autograder.sandbox.convert import Screen
    said = Screen(64 * MIB, (MIB // 2, 4 * MIB))(np.ones(MIB // 4))[1]["message"]
    assert TOO_MUCH in said and "(4 MiB of results in all): the result takes 2 MiB as the grader reads it" in said
    assert "and 512 KiB was left" in said, said
