"""The release notebooks' visible tests (numpy only) catch every catalogued mistake they can.

A notebook is run the way nbgrader runs it, on its own: the instructor's answers with the
student's functions for that notebook in their place, then its visible-test cells (the 0-point
grade cells). A mistake is *caught* in a notebook when one of its visible cells fails. A failure
raised by the visible test's own code must be an AssertionError whose message starts with the
advice on its first line and the evidence on lines of their own, each short enough that `nbgrader validate`
(90 columns, its default in a student's folder) shows it whole.

Two corpora go through it: the sample student code in tests/fixtures/impl/ (each fixture is
caught in the notebooks where the hidden tests take its points, plus the extras listed below),
and every entry of the misconception catalogue, in every notebook that defines its function.
"""
from __future__ import annotations

import functools
import importlib
import inspect
import re

import nbformat
import numpy as np
import pytest

from autograder.course import resources
from autograder.misconceptions import CATALOGUE, compounds_for
from autograder.samples.sample_class import overrides_from_source
from autograder.samples.synthetic import fill_notebook, reference_answers
from conftest import NOTEBOOKS, RELEASE, SOURCE

FIXTURES = sorted(resources.fixture_sources())

VALIDATE_WIDTH = 90                        # nbgrader's Validator.width default
ADVICE_WIDTH = VALIDATE_WIDTH - 3 - len("    AssertionError: ") - 1   # what validate shows of a message
EVIDENCE_WIDTH = VALIDATE_WIDTH - 3 - len("    ")                   # each later line, indented by validate

# Fixtures caught in more notebooks than those where the hidden tests take points, and why.
EXTRA_CAUGHT = {
    "no_max_subtraction": ({"ex2_causal_mask", "ex4_cross_attention"},
                           "the notebook's own softmax copy overflows on the visible large-score case"),
    "softmax_global_sum": ({"ex2_causal_mask", "ex4_cross_attention"},
                           "the notebook's own softmax copy makes rows that do not sum to 1"),
}
# Fixtures that lose points in a notebook whose visible tests cannot catch them, and why: each is right on
# every input of the visible tests, which use small shapes with n_q >= 2 and call each function once.
FIXTURE_MISSES: dict[tuple[str, str], str] = {
    **{("nothing_right_only_on_small_shapes", nb): "right by construction on every size up to 5, the visible "
       "tests' largest" for nb in ("ex1_attention", "ex2_causal_mask", "ex4_cross_attention")},
    **{("nothing_detects_the_grader", nb): "gaming: right whenever the grader is not on the call stack, as when "
       "the visible tests run" for nb in ("ex1_attention", "ex2_causal_mask", "ex4_cross_attention")},
    ("shapes_squeezed_for_one_query", "ex4_cross_attention"): "wrong only with one query (n_q = 1); the visible "
        "test has two",
    ("state_cached_on_q_only", "ex4_cross_attention"): "wrong only on a second call with the same Q; the visible "
        "test calls once",
    ("state_returned_buffer_reused", "ex1_attention"): "an earlier result changes only after a later call; the "
        "visible test holds one result",
}

# Catalogue entries (id, function, notebook, the realisation's fixed axis) the visible tests cannot catch there, and why.
_LAST_AXIS_ONLY = ("the notebook only ever calls softmax along the last axis, where a fixed last axis (or axis=1 on "
                   "its 2-d scores) in place of `axis` is harmless; ex1's visible test catches it")
CATALOGUE_MISSES = {("softmax-wrong-axis", "softmax", name, over): _LAST_AXIS_ONLY
                    for name in ("ex2_causal_mask", "ex4_cross_attention") for over in ("last", 1)}


def _nbgrader(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


@functools.cache
def _release(name):                        # read once (fill_notebook fills a copy)
    return nbformat.read(RELEASE / f"{name}.ipynb", as_version=4)


@functools.cache
def _answers() -> dict[str, dict[str, str]]:
    """The source's reference answers, read once: collection asks for them per catalogue entry (1196 times)."""
    return reference_answers(SOURCE)


def _is_visible(cell) -> bool:
    meta = _nbgrader(cell)
    return cell.cell_type == "code" and meta.get("grade") and meta.get("points") == 0


def _defined(name) -> set[str]:
    """The functions the solution cells of notebook ``name`` define."""
    code = "\n".join(_answers()[name].values())
    return set(re.findall(r"^def (\w+)\(", code, re.M))


def _notebook_of_grade_id() -> dict[str, str]:
    return {_nbgrader(c)["grade_id"]: name for name in NOTEBOOKS
            for c in nbformat.read(SOURCE / f"{name}.ipynb", as_version=4).cells if _nbgrader(c).get("grade")}


def run_visible(name: str, overrides: dict[str, str] | None = None, plugged: dict | None = None):
    """{visible grade_id: None if it passed, else the failure message} for notebook ``name``.

    ``overrides`` are function sources appended where the function lives (as a student's edit),
    ``plugged`` are callables put in the namespace after the cell that defines them.
    """
    nb = fill_notebook(_release(name), _answers()[name], overrides)
    ns, results = {"np": np}, {}
    for cell in nb.cells:
        meta = _nbgrader(cell)
        if meta.get("solution"):
            exec(compile(cell.source, f"<student {meta['grade_id']}>", "exec"), ns)   # noqa: S102
            for fn, impl in (plugged or {}).items():
                if fn in ns:
                    ns[fn] = _with_signature(impl, ns[fn])
        elif meta.get("grade_id", "").endswith("_visible_code"):          # the tests' code, above each call
            exec(compile(cell.source, f"<visible {meta['grade_id']}>", "exec"), ns)  # noqa: S102
        elif _is_visible(cell):
            results[meta["grade_id"]] = _outcome(cell.source, meta["grade_id"], ns)
    return results


def _with_signature(impl, reference):
    """``impl`` (positional arguments only) called the way the exercise's signature allows."""
    signature = inspect.signature(reference)

    def student(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return impl(*bound.args)
    return student


def _outcome(source: str, grade_id: str, ns: dict) -> str | None:
    try:
        with np.errstate(all="ignore"):
            exec(compile(source, f"<visible {grade_id}>", "exec"), ns)        # noqa: S102
    except AssertionError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - allowed only from the student's own code
        files = []
        tb = exc.__traceback__
        while tb is not None:
            files.append(tb.tb_frame.f_code.co_filename)
            tb = tb.tb_next
        last_visible = max(i for i, f in enumerate(files) if f.startswith("<visible"))
        students = [f for f in files[last_visible + 1:] if not _library(f)]
        assert students, (f"{grade_id}: the visible test itself crashed with {type(exc).__name__}: {exc}; "
                          "it should fail with an assertion saying what to change")
        return f"raised {type(exc).__name__} in the student's code: {exc}"
    return None


def _library(filename: str) -> bool:
    return "site-packages" in filename or "/numpy/" in filename or filename.startswith("<__array")


def _check_messages(results: dict, label: str):
    for grade_id, msg in results.items():
        if msg is None or msg.startswith("raised "):
            continue
        advice = re.split(r":\s", msg, maxsplit=1)[0]
        assert msg and "Traceback" not in msg, (label, grade_id, msg)
        assert len(advice) <= ADVICE_WIDTH, (
            f"{label}, {grade_id}: put the advice first and keep it within {ADVICE_WIDTH} characters "
            f"(nbgrader validate cuts lines at {VALIDATE_WIDTH} columns): {advice!r}")
        assert advice[0].isupper(), (label, grade_id, msg)
        first, *evidence = msg.split("\n")
        assert len(first) <= ADVICE_WIDTH + 1 and all(len(line) <= EVIDENCE_WIDTH for line in evidence), (
            f"{label}, {grade_id}: put the evidence after the advice on lines of at most {EVIDENCE_WIDTH} "
            f"characters (nbgrader validate cuts lines at {VALIDATE_WIDTH} columns): {msg!r}")


def _caught(results: dict) -> bool:
    return any(msg is not None for msg in results.values())


def _expected_fixture(fixture: str) -> set[str]:
    loses = getattr(importlib.import_module(f"fixtures.impl.{fixture}"), "LOSES", {})
    where = _notebook_of_grade_id()
    expected = {where[g] for g, points in loses.items() if points}
    expected |= EXTRA_CAUGHT.get(fixture, (set(), ""))[0]
    return expected - {nb for (fx, nb) in FIXTURE_MISSES if fx == fixture}


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_reference_answers_pass_every_visible_test(name):
    assert run_visible(name) and all(msg is None for msg in run_visible(name).values())


@pytest.mark.parametrize("fixture", FIXTURES)
def test_fixture_caught_exactly_where_expected(fixture):
    """Caught in every notebook where it loses points (and the listed extras); honest code in none."""
    overrides = overrides_from_source(resources.fixture_sources()[fixture])   # as the sample class has it
    caught = set()
    for name in NOTEBOOKS:
        results = run_visible(name, overrides=overrides)
        _check_messages(results, f"{fixture} in {name}")
        if _caught(results):
            caught.add(name)
    assert caught == _expected_fixture(fixture), (
        f"{fixture}: visible tests fail in {sorted(caught)}, expected {sorted(_expected_fixture(fixture))} "
        "(the notebooks where it loses points, plus EXTRA_CAUGHT, minus FIXTURE_MISSES)")


def test_correct_fixtures_pass_and_mistakes_are_caught_somewhere():
    correct = [f for f in FIXTURES if f.startswith("correct")]
    assert len(correct) >= 3
    assert all(not _expected_fixture(f) for f in correct)
    missed = {f for f in FIXTURES if f not in correct and not _expected_fixture(f)}
    assert missed == {f for f, _ in FIXTURE_MISSES}, "a mistake no visible test catches must be in FIXTURE_MISSES"
    assert missed == {"nothing_right_only_on_small_shapes", "shapes_squeezed_for_one_query", "state_cached_on_q_only",
                      "state_returned_buffer_reused",       # each right on every input the visible tests use
                      "nothing_detects_the_grader"}         # and one right whenever the grader is not calling


def _entries():
    """Every catalogue entry (each realisation of each family), then every compound of two the diagnosis can name."""
    functions = sorted({e.function for e in CATALOGUE})
    return [*CATALOGUE, *(c for fn in functions for c in compounds_for(fn))]


ENTRIES = _entries()


def _catalogue_cases():
    cases = []
    for i, entry in enumerate(ENTRIES):
        for name in NOTEBOOKS:
            if entry.function in _defined(name):
                cases.append(pytest.param(i, name, id=f"{entry.id}-{entry.function}-{i}-{name}"))
    return cases


@pytest.mark.parametrize("index, name", _catalogue_cases())
def test_catalogue_entry_caught_in_every_notebook_where_it_can_occur(index, name):
    entry = ENTRIES[index]
    results = run_visible(name, plugged={entry.function: entry.impl})
    _check_messages(results, f"{entry.id} in {name}")
    reason = CATALOGUE_MISSES.get((entry.id, entry.function, name, entry.knobs.get("over")))
    if reason:
        assert not _caught(results), f"{entry.id} is now caught in {name}: drop it from CATALOGUE_MISSES"
    else:
        assert _caught(results), (
            f"`{entry.function}` written as {entry.id} (entry {index}) passes every visible test of "
            f"{name}: add a visible test that catches it, or list it in CATALOGUE_MISSES with the reason")


def test_every_catalogue_function_is_in_some_notebook():
    defined = set().union(*(_defined(n) for n in NOTEBOOKS))
    assert {e.function for e in CATALOGUE} <= defined
    assert all(key[2] in NOTEBOOKS and reason for key, reason in CATALOGUE_MISSES.items())
    realised = {(e.id, e.function, e.knobs.get("over")) for e in CATALOGUE}
    assert {(mid, fn, over) for mid, fn, _, over in CATALOGUE_MISSES} <= realised   # no stale key hides one


def test_scaling_mistake_names_the_fix_in_ex2_and_ex4():
    """Forgetting sqrt(d_k) used to pass the visible tests of ex2 and ex4."""
    for function, name in (("causal_attention", "ex2_causal_mask"), ("cross_attention", "ex4_cross_attention")):
        entry = next(e for e in CATALOGUE if e.id == "no-scaling" and e.function == function)
        results = run_visible(name, plugged={function: entry.impl})
        failed = [msg for msg in results.values() if msg]
        assert len(failed) == 1 and failed[0].startswith("Divide the scores by sqrt(d_k)"), failed


STUB_SOFTMAX = "def softmax(x, axis=-1):\n    raise NotImplementedError()\n"


@pytest.mark.parametrize("name, function, cell", [("ex2_causal_mask", "causal_attention", "ex2_causal_visible"),
                                                  ("ex4_cross_attention", "cross_attention", "ex4_cross_visible")])
def test_a_softmax_stub_is_named_as_the_grader_names_it(name, function, cell):
    """A notebook whose copied softmax is still the stub: its attention's visible test says so (as the
    grader does) instead of a bare NotImplementedError traceback; a stub attention keeps its own error."""
    results = run_visible(name, overrides={"softmax": STUB_SOFTMAX})
    said = results[cell]
    assert said.startswith("Write softmax in this notebook too (copy it from exercise 1):\n"
                           f"{function} calls this notebook's softmax"), said
    stub = f"def {function}(Q, K, V):\n    raise NotImplementedError()\n"
    said = run_visible(name, overrides={function: stub})[cell]
    assert said.startswith("raised NotImplementedError in the student's code"), said


def test_the_crossover_off_by_one_is_not_blamed_on_the_expansion():
    strict = ("def crossover_length(d_model, dtype_bytes=2, expansion=4):\n    n = 1\n"
              "    while not n * n * dtype_bytes > n * expansion * d_model * dtype_bytes:\n        n += 1\n    return n\n")
    said = run_visible("ex3_memory", overrides={"crossover_length": strict})["ex3_crossover_visible"]
    assert said.startswith("Stop at the first n with attention >= FFN (>=, not >)") and "expansion you" not in said
