"""In-process grading: the student's code cannot reach the grader's reference engine while it runs
(``autograder.grading.hiding``), as in the sandbox, where ``solutions`` and ``autograder`` are empty mounts."""
import sys
import textwrap

import numpy as np

import autograder
import solutions
from autograder.grading.hiding import grader_hidden

# Two gaming notebooks of our own: one imports the reference inside the function, one looks for it among
# the grader's loaded modules (sys.modules); each falls back to a uniform answer where it finds nothing.
BORROWS = """
import numpy as np

def _uniform(Q, K, V):
    w = np.full((len(Q), len(K)), 1.0 / len(K))
    return w @ V, w

def scaled_dot_product_attention(Q, K, V):
    try:
        from solutions import scaled_dot_product_attention as theirs
    except ImportError:
        return _uniform(Q, K, V)
    return theirs(Q, K, V)
"""

SEARCHES = """
import sys
import numpy as np

def cross_attention(Q, K, V):
    for name, mod in list(sys.modules.items()):
        if not name.startswith(("solutions", "autograder")):     # the grader's modules, wherever loaded
            continue
        f = getattr(mod, "cross_attention", None) if mod is not None else None
        if callable(f) and name != __name__ and getattr(f, "__module__", None) != __name__:
            return f(Q, K, V)
    w = np.full((len(Q), len(K)), 1.0 / len(K))
    return w @ V, w
"""


def _notebook(source: str) -> dict:
    space = {"__name__": "__main__"}
    exec(compile(textwrap.dedent(source), "<student>", "exec"), space)
    return space


def _cell_points(record, grade_id):
    cell = [c for c in record.checks if c.grade_id == grade_id]
    return sum(c.points for c in cell), sum(c.max_points for c in cell)


def test_import_of_the_reference_inside_the_function_finds_nothing():
    record = autograder.grade_namespace({**vars(solutions), **_notebook(BORROWS)}, "hidden-1")
    got, most = _cell_points(record, "ex1_attention")
    assert got <= 1 < most                      # the shape point at most: uniform weights compute nothing


def test_search_of_the_loaded_modules_finds_no_cross_attention():
    record = autograder.grade_namespace({**vars(solutions), **_notebook(SEARCHES)}, "hidden-2")
    got, most = _cell_points(record, "ex4_cross")
    assert got <= 1 < most


def test_the_modules_are_back_after_each_call_and_what_the_call_added_is_gone():
    before = {k: v for k, v in sys.modules.items() if k.partition(".")[0] in ("solutions", "autograder")}
    with grader_hidden():
        assert sys.modules["solutions"] is None and sys.modules["autograder.grading.hiding"] is None
        sys.modules["solutions.planted"] = np          # the student's own entry under the hidden name
        try:
            import solutions as again                   # noqa: F401
        except ImportError:
            pass
        else:
            raise AssertionError("solutions was importable inside the block")
    after = {k: v for k, v in sys.modules.items() if k.partition(".")[0] in ("solutions", "autograder")}
    assert after == before


def test_the_reference_itself_still_grades_in_process():
    """Grading the engine's own functions (the grader's tests do) still works: the hidden modules are
    reached through the functions' own globals, not through imports."""
    record = autograder.grade_namespace(vars(solutions), "engine-hidden")
    assert record.total == record.max_total
