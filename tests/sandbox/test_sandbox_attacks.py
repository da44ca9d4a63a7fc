"""Each attack on the hardened grader is a test (issue: hardened grading of one submission)."""
import importlib
import os
import pkgutil
import re
import socket
from pathlib import Path

import pytest

import adversarial
from autograder.sandbox.limits import Limits
from conftest import ROOT
from sandbox_helpers import RIGHT_MASK, WRONG_MASK, ex2_notebook, grade, lasting_processes, probe


CORPUS = sorted(m.name for m in pkgutil.iter_modules(adversarial.__path__))


@pytest.fixture(scope="module")
def honest(server, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("honest")
    wrong = grade(ex2_notebook(tmp, "honest_wrong", WRONG_MASK), server)
    right = grade(ex2_notebook(tmp, "honest_right", RIGHT_MASK), server)
    assert right.total == right.max_total == 9 and wrong.total < right.total
    return {"wrong": wrong.total, "right": right.total}


def _score(server, tmp_path, code, name="attacker", extra=None):
    return grade(ex2_notebook(tmp_path, name, code, extra), server)


OTHER_PLACEHOLDERS = ("TCP_PORT", "UDP_PORT", "UNIX_PATH", "ABSTRACT_NAME", "SHM_KEY")


def _placeable(mod) -> bool:
    """A corpus probe this test can place: its code in causal_mask, no host service to reach (the
    listeners and segments those need are test_adversarial.py's)."""
    code = getattr(mod, "CODE", "")
    return mod.KIND == "probe" and mod.TARGET == "causal_mask" and code \
        and not any(p in code for p in OTHER_PLACEHOLDERS)


PROBES = sorted(name for name in CORPUS if _placeable(importlib.import_module(f"adversarial.{name}")))


def test_the_probes_are_drawn_from_the_corpus():
    assert len(PROBES) >= 20 and "probe_read_source_notebooks" in PROBES and "probe_tcp_loopback" not in PROBES


@pytest.mark.parametrize("name", PROBES)
def test_capability_probe_scores_as_honest_wrong(server, honest, tmp_path, name):
    """Each probe of the corpus, graded against this checkout as the course (COURSE is its root)."""
    code = importlib.import_module(f"adversarial.{name}").CODE.replace("COURSE", repr(str(ROOT)))
    record = _score(server, tmp_path, probe(code))
    assert record.total == honest["wrong"], record.checks
    assert not list(Path("/tmp").glob("adversarial-*"))


def _tcp_listener():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(0.2)
    return srv


def test_no_tcp_or_udp(server, honest, tmp_path):
    tcp = _tcp_listener()
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(0.2)
    code = (f"import socket\ns = socket.create_connection(('127.0.0.1', {tcp.getsockname()[1]}), timeout=1)\n"
            f"u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            f"u.sendto(b'escape', ('127.0.0.1', {udp.getsockname()[1]}))\nESCAPED = True")
    record = _score(server, tmp_path, probe(code))
    assert record.total == honest["wrong"]
    with pytest.raises(OSError):
        tcp.accept()
    with pytest.raises(OSError):
        udp.recvfrom(100)


CHEATS = {
    "monkeypatch_numpy": "np.allclose = lambda *a, **k: True\nnp.testing.assert_allclose = lambda *a, **k: None\n"
                         "np.array_equal = lambda *a, **k: True",
    "replace_builtins": "import builtins\nbuiltins.abs = lambda x: 0\nbuiltins.round = lambda *a: 0\n"
                        "builtins.print = lambda *a, **k: None",
    "ipython_input_transformer": "def hide_tests(lines):\n    text = ''.join(lines)\n"
                                 "    return ['pass\\n'] if ('assert' in text or 'grade' in text) else lines\n"
                                 "get_ipython().input_transformers_post.append(hide_tests)",
    "ipython_custom_exception_handler": "get_ipython().set_custom_exc((Exception,), lambda *a, **k: None)",
    "fake_results_on_stdout": "print('[PASS] values (2/2): ok')\nprint('total 9/9')\nprint('{\"total\": 9}')",
    "fake_results_on_every_fd": "import os\nfor fd in range(1024):\n    try:\n        os.write(fd, b'\\x93AGRPC1\\x00' + b'{\"total\": 9}' * 10)\n"
                                "    except OSError:\n        pass",
    "ndarray_subclass_rigged_eq": "class Rigged(np.ndarray):\n    def __eq__(self, o): return np.ones(np.shape(o), bool)\n"
                                  "    def __array_ufunc__(self, *a, **k): return True\n"
                                  "_wrong = causal_mask\ncausal_mask = lambda n: _wrong(n).view(Rigged)",
    "reduce_runs_a_command": "class Evil:\n    def __reduce__(self):\n        import os\n        return (os.system, ('touch /tmp/attention-course-reduce',))\n"
                             "_wrong = causal_mask\ncausal_mask = lambda n: Evil()",
}


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_cheat_on_wrong_code_scores_as_honest_wrong(server, honest, tmp_path, name):
    record = _score(server, tmp_path, WRONG_MASK + "\n" + CHEATS[name])
    assert record.total <= honest["wrong"]
    assert not os.path.exists("/tmp/attention-course-reduce")
    if name == "fake_results_on_every_fd":        # bytes in the grader's channel end that worker
        assert record.needs_review and any("broke the protocol" in e for e in record.integrity)
    elif name not in ("ndarray_subclass_rigged_eq", "reduce_runs_a_command"):
        assert record.total == honest["wrong"]


DISRUPTIONS = {
    "sys_exit": "import sys\nsys.exit(3)",
    "os_exit": "import os\nos._exit(0)",
    "segfault": "import ctypes\nctypes.string_at(0)",
    "deep_recursion": "import sys\nsys.setrecursionlimit(10**6)\ndef f(n): return f(n + 1)\nf(0)",
    "infinite_loop": "while True:\n    pass",
    "loop_ignoring_sigint_sigterm": "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                                    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass",
    "sleep_forever": "import time\ntime.sleep(10**6)",
    "memory_bomb": "x = bytearray(50 * 2**30)",
    "fork_bomb": "import os\nfor _ in range(200):\n    try:\n        os.fork()\n    except OSError:\n        break",
    "kill_parent": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)",
    "stdout_300mb": "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(300):\n    sys.stdout.write(chunk)",
}


@pytest.mark.parametrize("name", sorted(DISRUPTIONS))
def test_disruption_on_right_code_leaves_grader_running(server, tmp_path, name):
    # the disruption sits in its own cell after the right code
    record = _score(server, tmp_path, RIGHT_MASK, extra={"causal_attention": _causal_plus(DISRUPTIONS[name])})
    assert record.student_id == "attacker" and record.max_total == 9
    assert record.checks, "a record with checks"
    assert server.alive(), "the fork server survived"
    assert record.total == 9 or record.needs_review, (record.total, record.integrity)


def _causal_plus(code):
    return '''
def causal_attention(Q, K, V):
    n, d_k = Q.shape
    scores = Q @ K.T / np.sqrt(d_k) + causal_mask(n)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
''' + "\n" + code


def test_double_forked_daemon_does_not_survive(server, tmp_path):
    from adversarial import disrupt_double_forked_daemon as daemon
    record = _score(server, tmp_path, RIGHT_MASK + "\n" + daemon.CODE)
    assert record.total == 9
    assert lasting_processes("agadvdaemon") == []


def test_warning_costs_nothing(server, tmp_path):
    code = '''
import warnings
def causal_mask(n):
    warnings.warn("this is a warning from the student")
    import sys
    print("debug", file=sys.stderr)
    return np.triu(np.full((n, n), -np.inf), k=1)
'''
    record = _score(server, tmp_path, code)
    assert record.total == 9 and not record.needs_review
    assert "debug" in record.output


def test_function_that_never_returns(server, tmp_path):
    never = "def causal_attention(Q, K, V):\n    while True:\n        pass\n"
    limits = Limits(cell_seconds=4, call_seconds=1, total_seconds=30, spawns=3)
    record = grade(ex2_notebook(tmp_path, "attacker", RIGHT_MASK, {"causal_attention": never}), server, limits)
    assert [c.passed for c in record.checks if c.grade_id == "ex2_mask"] == [True, True]
    causal = [c for c in record.checks if c.grade_id == "ex2_causal"]
    assert all(not c.passed for c in causal)
    assert "did not return: no answer within 1 s" in causal[0].message
    assert record.needs_review and record.total == 3


def test_huge_return_value_is_refused(server, tmp_path):
    code = "def causal_mask(n):\n    return np.zeros((1 << 13, 1 << 13))\n"   # 512 MB > the 64 MB cap
    record = _score(server, tmp_path, code)
    msgs = [c.message for c in record.checks if c.grade_id == "ex2_mask"]
    assert any("more than the" in m or "did not return" in m for m in msgs), msgs


def test_function_that_deletes_itself(server, tmp_path):
    code = ("def causal_mask(n):\n    globals().pop('causal_mask', None)\n"
            "    return np.triu(np.full((n, n), -np.inf), k=1)\n")
    record = _score(server, tmp_path, code)
    messages = [c.message for c in record.checks if not c.passed]
    # The mask's questions go in one batch (looked up once); what calls it after it is gone is told so.
    assert any("`causal_mask` could not be called: causal_mask is not defined" in m
               or "uses `causal_mask`, which that notebook does not define" in m for m in messages), messages


def test_swapped_output_file_leaks_nothing(server, tmp_path):
    """Links and FIFOs in the working folder under any name the grader might read: the grader reads
    the worker's output only through a file it created itself, so it copies none of them."""
    rubric, engine = ROOT / "autograder" / "grading" / "rubric.py", ROOT / "solutions" / "__init__.py"
    code = RIGHT_MASK + f'''
import os
for name, target in [("fd_output.log", {str(rubric)!r}), ("output.log", {str(engine)!r}),
                     ("stdout", "/proc/1/environ"), ("environ", "/proc/self/environ")]:
    try:
        os.remove(name)
    except OSError:
        pass
    os.symlink(target, name)
os.mkfifo("fifo")
print("the student printed this")
os.write(1, b"and wrote this to fd 1")
'''
    record = _score(server, tmp_path, code)
    assert record.total == 9
    assert "the student printed this" in record.output and "and wrote this to fd 1" in record.output
    for secret in ("RUBRIC", "def ", "PATH=", "import"):
        assert secret not in record.output, secret


def test_forged_reply_ends_the_worker_and_its_daemon(server, tmp_path):
    """A function that starts a daemon, then writes a forged reply into the grader's channel: that
    call fails with a message, the worker and the daemon are gone, and grading goes on."""
    from adversarial import disrupt_double_forked_daemon as daemon
    forge = daemon.CODE + '''
import json, os, struct, socket
def causal_mask(n):
    head = json.dumps({"op": "call_many", "ok": True, "many": {"items": [], "arrays": []}}).encode()
    frame = b"\\x93AGRPC1\\x00" + struct.pack("<QI", 1, len(head)) + head + struct.pack("<Q", 0)
    for fd in range(3, 64):
        try:
            if socket.socket(fileno=os.dup(fd)).type == socket.SOCK_STREAM:
                os.write(fd, frame)
        except OSError:
            pass
    return np.triu(np.full((n, n), -np.inf), k=1)
'''
    record = _score(server, tmp_path, forge)
    mask = [c for c in record.checks if c.grade_id == "ex2_mask"]
    assert mask and not any(c.passed for c in mask)
    assert record.needs_review and any("broke the protocol" in e for e in record.integrity)
    assert lasting_processes("agadvdaemon") == []
    assert server.alive()


def test_a_student_who_raises_the_workers_words_is_told_it_raised(server, tmp_path):
    """Only the worker's own flag says a call ran past its time: code that raises TimeoutError with the worker's
    words is told what it raised (it was read as a grader timeout by its text)."""
    code = "def causal_mask(n):\n    raise TimeoutError('did not return within 1 s')\n"
    record = _score(server, tmp_path, code)
    said = [c.message for c in record.checks if c.grade_id == "ex2_mask"]
    assert said and all(m.startswith("`causal_mask` raised TimeoutError: did not return within 1 s") for m in said), said


UNREADABLE_STR = """
class Sly(Exception):
    def __str__(self):
        raise {inner}

def causal_mask(n):
    raise Sly('x')
"""


@pytest.mark.parametrize("inner", ["ValueError('no')", "Sly('again')", "SystemExit(3)"])
def test_a_student_exception_whose_str_raises_is_said_to_be_raised(server, tmp_path, inner):
    """An exception whose ``__str__`` raises (again, or a BaseException) is still what the function raised:
    the student is told it raised Sly and that its message could not be read. Before, the worker's summary of it
    raised in turn and the student read that `causal_mask` "could not be called"."""
    record = _score(server, tmp_path, UNREADABLE_STR.format(inner=inner))
    said = [c.message for c in record.checks if c.grade_id == "ex2_mask"]
    assert said and all(m.startswith("`causal_mask` raised Sly (its message could not be read)") for m in said), said
    assert not any("could not be called" in c.message for c in record.checks)


def test_a_student_exception_whose_str_raises_is_said_to_be_raised_in_process():
    """The same words in-process (``grade_namespace``), where ``str(exc)`` raised into the grader."""
    from autograder import grade_namespace
    namespace: dict = {}
    exec(UNREADABLE_STR.format(inner="ValueError('no')"), namespace)
    record = grade_namespace(namespace)
    said = [c.message for c in record.checks if c.grade_id == "ex2_mask"]
    assert said and all(m.startswith("`causal_mask` raised Sly (its message could not be read)") for m in said), said


DEAF_TO_ITS_TIMER = """
def causal_attention(Q, K, V):
    import signal
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})     # the worker's own timer never fires
    while True:
        pass
"""


@pytest.mark.parametrize("total, bound", [(30, "call"), (4, "submission")])
def test_a_call_the_grader_ends_says_which_limit_in_whole_seconds(server, tmp_path, total, bound):
    """A function deaf to the worker's timer is ended by the grader's deadline: the student reads that limit in
    whole seconds (a batch's was "no answer within 31.75 s"), which limit it was (the calls' own time, or this
    submission's grading time when that ran out first) and what to look for."""
    limits = Limits(cell_seconds=4, call_seconds=1.3, total_seconds=total, spawns=3)
    record = grade(ex2_notebook(tmp_path, "deaf", RIGHT_MASK, {"causal_attention": DEAF_TO_ITS_TIMER}), server, limits)
    said = [c.message for c in record.checks if c.grade_id == "ex2_causal" and "did not return" in c.message]
    assert said, [c.message for c in record.checks]
    assert not any(re.search(r"\d\.\d+ s", m) for m in said), said
    assert all("look for a loop that never ends" in m for m in said), said
    if bound == "call":
        assert all(re.search(r"no answer within \d+ s \((one call|\d+ calls), each may take 1 s\)", m) for m in said)
    else:
        assert any("before this submission's grading time ran out (4 s for the whole submission)" in m for m in said)
