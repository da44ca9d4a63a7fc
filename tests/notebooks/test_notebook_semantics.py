"""Each notebook is graded on its own functions, as `nbgrader autograde` grades it (one kernel per notebook).

The same cases run in-process (``grade_namespace`` with one namespace per notebook) and in the
sandbox (one worker per notebook); both must give nbgrader's scores (tests/env/nbgrader/test_course_agreement.py
has nbgrader autograde the same kinds of case in the course's one autograded class). nbgrader runs a
notebook's cells in order, so a grade cell's tests see the functions as defined where that cell stands:
cells a student adds after it do not count for it (``AFTER``, sandbox only: in-process the kernel already
runs in order).
"""
import numpy as np
import pytest

import autograder
from autograder.run.hardened import grade_submission
from autograder.samples.synthetic import filled_answers, reference_answers, write_submission
from conftest import RELEASE, ROOT, SOURCE

STUB = "def softmax(x, axis=-1):\n    raise NotImplementedError()\n"
INLINE_CROSS = ("def cross_attention(Q, K, V):\n    s = Q @ K.T / np.sqrt(Q.shape[-1])\n"
                "    e = np.exp(s - s.max(axis=-1, keepdims=True))\n    w = e / e.sum(axis=-1, keepdims=True)\n"
                "    return w @ V, w\n")
OLD_COPY = "def softmax(x, axis=-1):\n    e = np.exp(x - x.max())\n    return e / e.sum()\n"   # global sum

CASES = {
    # untouched "copy your softmax" stub in ex4, softmax written inline in cross_attention
    "inline-softmax-in-ex4": {"ex4_cross_attention": {"softmax": STUB, "cross_attention": INLINE_CROSS}},
    # an older, wrong copy of softmax in ex4: costs ex4's points, never ex1's or ex2's
    "old-softmax-copy-in-ex4": {"ex4_cross_attention": {"softmax": OLD_COPY}},
    # softmax left as the stub in ex1 and written only in ex2
    "stub-softmax-in-ex1": {"ex1_attention": {"softmax": STUB}},
    # softmax removed from ex4 altogether
    "no-softmax-in-ex4": {"ex4_cross_attention": {"softmax": "del softmax\n"}},
}
GOOD_SOFTMAX = ("def softmax(x, axis=-1):\n    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
                "    return e / e.sum(axis=axis, keepdims=True)\n")
RAISING_CROSS = "def cross_attention(Q, K, V):\n    raise RuntimeError('scratch work')\n"
# case -> (per-notebook overrides, cells added at the notebook's end, after its grade cells)
AFTER = {
    # ex1's softmax is still the stub when ex1's grade cells run; a correct one comes in a later cell
    "softmax-defined-after-grade-cells": ({"ex1_attention": {"softmax": STUB}}, {"ex1_attention": [GOOD_SOFTMAX]}),
    # cross_attention is correct at ex4's grade cell; a scratch redefinition that raises comes after it
    "broken-redefinition-after-grade-cell": ({}, {"ex4_cross_attention": [RAISING_CROSS]}),
}
# grade_id -> points lost, as nbgrader scores each case
LOSES = {
    "inline-softmax-in-ex4": {},
    "old-softmax-copy-in-ex4": {"ex4_cross": 2 + 1},
    "stub-softmax-in-ex1": {"ex1_softmax": 3, "ex1_attention": 5},
    "no-softmax-in-ex4": {"ex4_cross": 5},
    "softmax-defined-after-grade-cells": {"ex1_softmax": 3, "ex1_attention": 5},     # 20, as nbgrader
    "broken-redefinition-after-grade-cell": {},                                     # 28, as nbgrader
}


def namespaces(per_notebook: dict | None = None, overrides: dict | None = None) -> dict[str, dict]:
    """Each notebook's solution cells (with its overrides, as write_submission places them) run in a
    namespace of its own."""
    out = {}
    for notebook, answers in reference_answers(SOURCE).items():
        ns = {"np": np}
        mine = {**(overrides or {}), **(per_notebook or {}).get(notebook, {})}
        for code in filled_answers(answers, mine).values():
            exec(code, ns)                                  # noqa: S102 - our own course code and cases
        out[notebook] = ns
    return out


def lost(record) -> dict[str, int]:
    return {g: c.max - c.earned for g, c in record.cells.items() if c.earned < c.max}


def messages(record, grade_id: str) -> list[str]:
    return [c.message for c in record.checks if c.grade_id == grade_id and not c.passed]


@pytest.mark.parametrize("case", CASES)
def test_in_process_grades_each_notebook_on_its_own(case):
    record = autograder.grade_namespace(namespaces(CASES[case]), case)
    assert lost(record) == LOSES[case], [c.message for c in record.checks if not c.passed]
    assert record.max_total == 28 and not record.needs_review


def test_one_namespace_for_all_notebooks_still_works():
    shared = {}
    for ns in namespaces({}).values():
        shared.update(ns)
    assert autograder.grade_namespace(shared, "shared").total == 28


def test_stub_helper_is_named_with_its_notebook():
    record = autograder.grade_namespace(namespaces(CASES["stub-softmax-in-ex1"]), "s")
    want = ("`scaled_dot_product_attention` in ex1_attention.ipynb calls `softmax`, which in that notebook "
            "still raises NotImplementedError")
    assert all(m.startswith(want) for m in messages(record, "ex1_attention")), messages(record, "ex1_attention")
    assert all("`softmax` in ex1_attention.ipynb is still the stub" in m
               for m in messages(record, "ex1_softmax"))


def test_missing_helper_is_named_with_its_notebook():
    record = autograder.grade_namespace(namespaces(CASES["no-softmax-in-ex4"]), "s")
    want = "`cross_attention` in ex4_cross_attention.ipynb uses `softmax`, which that notebook does not define"
    assert all(m.startswith(want) for m in messages(record, "ex4_cross")), messages(record, "ex4_cross")


def test_a_typo_in_the_students_own_name_keeps_pythons_message():
    def softmax(x, axis=-1):
        return np.exp(x - mx)                                          # noqa: F821 - the student's typo
    record = autograder.grade_namespace({"softmax": softmax}, "s")
    said = messages(record, "ex1_softmax")
    assert said and all(m.startswith("`softmax` raised NameError: name 'mx' is not defined")   # (which inputs)
                        and ". Called with x of shape" in m for m in said), said


def test_other_errors_keep_their_own_message():
    def softmax(x, axis=-1):
        raise ValueError("boom")
    record = autograder.grade_namespace({"softmax": softmax}, "s")
    said = messages(record, "ex1_softmax")
    assert said and all(m.startswith("`softmax` raised ValueError: boom") and ". Called with x of shape" in m
                        for m in said), said


@pytest.fixture(scope="module")
def sandboxed(server, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("semantics")
    return {case: grade_submission(write_submission(RELEASE, SOURCE, tmp / "submitted" / case / "ch04_attention",
                                                    per_notebook=CASES[case]), course=ROOT, server=server)
            for case in CASES}


@pytest.mark.parametrize("case", CASES)
def test_sandbox_grades_each_notebook_on_its_own(sandboxed, case):
    record = sandboxed[case]
    assert lost(record) == LOSES[case], [c.message for c in record.checks if not c.passed]
    assert not record.needs_review, record.integrity
    in_process = autograder.grade_namespace(namespaces(CASES[case]), case)
    assert [c.message for c in record.checks] == [c.message for c in in_process.checks]


@pytest.mark.parametrize("case", AFTER)
def test_sandbox_checks_each_grade_cell_where_it_stands(server, tmp_path, case):
    """A grade cell's checks see the notebook as nbgrader's kernel has run it up to that cell."""
    per_notebook, extra = AFTER[case]
    folder = write_submission(RELEASE, SOURCE, tmp_path / "submitted" / case / "ch04_attention",
                              per_notebook=per_notebook, extra_cells=extra)
    record = grade_submission(folder, course=ROOT, server=server)
    assert lost(record) == LOSES[case], [c.message for c in record.checks if not c.passed]
    assert record.total == 28 - sum(LOSES[case].values()) and not record.needs_review, record.integrity
    at_grade_cells = autograder.grade_namespace(namespaces(per_notebook), case)   # the cells up to them
    assert [c.message for c in record.checks] == [c.message for c in at_grade_cells.checks]


def test_intake_places_every_grade_cell_where_it_stands(tmp_path):
    from autograder.course.view import read_course
    from autograder.run.hardened import grade_order, intake_submission
    from autograder.assignment import NOTEBOOKS
    folder = write_submission(RELEASE, SOURCE, tmp_path / "submitted" / "s" / "ch04_attention",
                              extra_cells={"ex1_attention": [GOOD_SOFTMAX]})
    intake = intake_submission(folder, read_course(ROOT, "ch04_attention"), "s")
    for notebook, grade_ids in NOTEBOOKS.items():
        order = grade_order(intake, notebook)
        assert {g for g, _ in order} == set(grade_ids) and None not in {i for _, i in order}, order
    ex1 = [c for c in intake.cells if c.notebook == "ex1_attention"]
    softmax, attention = (next(c.index for c in ex1 if c.source.startswith(f"def {name}("))
                          for name in ("softmax", "scaled_dot_product_attention"))
    assert ex1[-1].source == GOOD_SOFTMAX                          # the cell added at the end
    at = dict(grade_order(intake, "ex1_attention"))
    assert softmax < at["ex1_softmax"] < attention < at["ex1_attention"] < ex1[-1].index, (at, softmax, attention)


def test_module_level_tampering_stays_in_its_notebook(server, tmp_path):
    """ex1 breaks numpy for itself; the other notebooks run in their own workers and keep full marks."""
    tamper = {"ex1_attention": {"softmax": "np.exp = lambda x: np.zeros_like(x)\nnp.sum = lambda *a, **k: 1.0\n"}}
    folder = write_submission(RELEASE, SOURCE, tmp_path / "submitted" / "t" / "ch04_attention",
                              per_notebook=tamper)
    record = grade_submission(folder, course=ROOT, server=server)
    assert set(lost(record)) <= {"ex1_softmax", "ex1_attention"} and lost(record)
    assert record.notebooks["ex2_causal_mask"].earned == 9 and record.notebooks["ex4_cross_attention"].earned == 5
