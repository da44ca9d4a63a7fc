"""In-process grading shows a student's exception as the sandboxed runner does (issue 37, item 6).

In-process (``grade_namespace``, the path a notebook's hidden-test cells take), the frames above the student's
function are the grader's and whatever called the grader (a test, the hidden-test cell). A student who formats the
stack, or reads a calling frame's source or file, must see those frames as ``[a grader frame]``, their source as
``[grader source]`` and their paths as ``[grader]``/``[caller]``: the sandbox's worker shows its own frames so, and
its source cannot be read there. The student's own frames and numpy's stay.
"""
import linecache
import pathlib

import pytest

import autograder
import solutions
from autograder.grading import asking
from test_rubric_coverage import _zeros_namespace

ENGINE = {k: getattr(solutions, k) for k in _zeros_namespace()}
GRADER = str(pathlib.Path(autograder.__file__).resolve().parent)
HERE = str(pathlib.Path(__file__).resolve())

LEAKS = {
    "the stack": "import traceback\n    raise ValueError(''.join(traceback.format_stack()))",
    "a calling frame's source": "import inspect, sys\n    raise ValueError(inspect.getsource(sys._getframe(1)))",
    "a calling frame's file": "import sys\n    f = sys._getframe(1)\n    raise ValueError(f.f_code.co_filename + ' ' "
                              "+ f.f_back.f_code.co_filename)",
    "the whole stack's files": "import sys\n    f, names = sys._getframe(1), []\n    while f:\n"
                               "        names.append(f.f_code.co_filename)\n        f = f.f_back\n"
                               "    raise ValueError('\\n'.join(names))",
}


def _message(body: str) -> str:
    ns = {}
    exec(f"def softmax(x, axis=-1):\n    {body}\n", ns)            # noqa: S102 - the test's own student code
    record = autograder.grade_namespace({**ENGINE, "softmax": ns["softmax"]}, "leaky")
    return next(c.message for c in record.checks if c.grade_id == "ex1_softmax" and not c.passed)


def _grader_source() -> set:
    return {line.strip() for line in linecache.getlines(asking.__file__) if len(line.strip()) >= 16}


@pytest.mark.parametrize("leak", LEAKS)
def test_a_students_exception_carries_no_grader_path_caller_path_or_source(leak):
    said = _message(LEAKS[leak])
    assert "raised ValueError" in said
    assert GRADER not in said and HERE not in said and "/work/" not in said.split("Called with")[0]
    assert not any(line in said for line in _grader_source() if "def " in line), said


def test_the_students_own_frames_and_numpys_stay():
    said = _message("import traceback\n    try:\n        import numpy as np\n        np.linalg.inv(np.zeros((2, 2)))\n"
                    "    except Exception:\n        raise ValueError(traceback.format_exc())")
    assert 'File "<string>"' in said and "in softmax" in said and "numpy" in said


def test_the_filter_hides_only_what_called():
    """Unit: a caller's frame line (and the source line under it) is hidden, another file's is kept."""
    from autograder.grading.student import without_grader_frames
    text = (f'  File "{HERE}", line 3, in test_x\n    secret_hidden_test_line = grade(ns)\n'
            '  File "/usr/lib/python3/site.py", line 9, in f\n    x = 1\nValueError: boom')
    out = without_grader_frames(text, frozenset({HERE}))
    assert HERE not in out and "secret_hidden_test_line" not in out and "[a grader frame]" in out
    assert "/usr/lib/python3/site.py" in out and "ValueError: boom" in out
    assert without_grader_frames(text) == text                       # nothing called from here: nothing hidden
