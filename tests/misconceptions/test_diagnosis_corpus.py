"""DESIGN.md rule 4, a diagnosis names only what it has proven, measured on the labelled corpus
(tests/fixtures/diagnosis/) and checked rule by rule."""
import functools
import math

import numpy as np
import pytest

from autograder.grading.checks._base import Probe
from autograder.misconceptions import MAX_TRIPLES, compounds_for, diagnose, entries_for
from autograder.misconceptions.localise import localise
from autograder.misconceptions.probes import agree, probe_inputs
from autograder.misconceptions.proof import MIN_EVIDENCE
from autograder.grading.student import NotebookFunctions
from conftest import TESTS
from diagnosis_corpus import KINDS, cases, classify, score

SEEDS = ["corpus-ada", "corpus-grace", "corpus-alan"]
CASES = cases()


@functools.lru_cache(maxsize=None)
def _scores(student):
    return score([student], CASES)


def test_the_corpus_is_a_classifier_benchmark():
    """At least 8 misconceptions with 5 differently written variants each, compounds, triples,
    uncatalogued mistakes and unusual-but-correct code."""
    by_label = {}
    for case in CASES:
        by_label.setdefault(case.expected, []).append(case)
    singles = {k: v for k, v in by_label.items() if k not in KINDS and "+" not in k}
    assert sum(len(v) >= 5 for v in singles.values()) >= 8
    assert sum("+" in c.expected and c.expected.count("+") == 1 for c in CASES) >= 5
    assert sum(c.expected.count("+") == 2 for c in CASES) >= 3
    assert len(by_label["localised"]) >= 10 and len(by_label["correct"]) >= 8


@pytest.mark.parametrize("student", SEEDS)
def test_nothing_is_misnamed_and_correct_code_is_never_diagnosed(student):
    scores = _scores(student)
    misnamed = {v.case.name: sorted(v.wrong_names) for v in scores.verdicts if v.wrong_names}
    assert misnamed == {}
    assert scores.precision() == 1.0
    dirty = [v.case.name for v in scores.verdicts if v.case.expected == "correct" and not v.right]
    assert dirty == []
    assert scores.recall() >= 0.95
    unnamed = [v.case.name for v in scores.verdicts if v.case.expected == "unnamed" and v.names]
    assert unnamed == []


def test_every_labelled_id_is_named_on_its_cases():
    verdicts = [v for v in _scores(SEEDS[0]).verdicts if v.case.expected not in KINDS]
    assert [v.case.name for v in verdicts if not v.named] == []


# --- the rule, piece by piece --------------------------------------------------------------------

def _probe(function, fn):
    return Probe(NotebookFunctions({function: fn}), function)


def _diagnosed(function, fn, args):
    return diagnose(function, args, fn(*args), _probe(function, fn))


def test_zero_is_not_a_tiny_number():
    """The comparison is relative to the values: 0 does not match 2e-9 GB (an absolute 1e-6 made every
    answer that is 0 at n = 1 the GB variant)."""
    assert not agree(0, 2e-9) and agree(2e-9, 2e-9 * (1 + 1e-12))
    assert _diagnosed("attention_memory_bytes", lambda n, b=2: 0, (1, 2)) is None
    assert _diagnosed("attention_memory_bytes", lambda n, b=2: n * n * b // 1024, (1, 2)) is None


def test_a_count_in_gigabytes_is_named_at_the_resolution_it_shows_and_a_constant_proves_nothing():
    """bytes-as-gb is a family (issue 28, items 1 and 5): the byte count in GB or GiB, exactly or rounded
    (round, ceil, floor) to the places the answer shows, is named, read where the answers show enough digits;
    an answer that is 0 or 1 wherever it is asked, a count with a second mistake shown in GB, or a count in
    MiB is not."""
    gb = {"ceil": lambda n, b=2: math.ceil(n * n * b / 1e9), "round": lambda n, b=2: round(n * n * b / 2**30, 1),
          "floor": lambda n, b=2: n * n * b // 10**9, "GiB": lambda n, b=2: n * n * b / 1024**3}
    for how, fn in gb.items():
        entry = _diagnosed("attention_memory_bytes", fn, (3000, 2))
        assert entry is not None and entry.id == "bytes-as-gb", how
    assert "divided by 10**9, a count in GB, rounded up to a whole number" in \
        _diagnosed("attention_memory_bytes", gb["ceil"], (3000, 2)).sentence
    for fn in (lambda n, b=2: 1, lambda n, b=2: 0.0, lambda n, b=2: round(n ** 3 * b / 1e9, 2),
               lambda n, b=2: round(n * n * b / 2**20, 1), lambda n, b=2: math.ceil(n * n / 1e9)):
        assert _diagnosed("attention_memory_bytes", fn, (3000, 2)) is None


def test_a_match_on_one_degenerate_input_is_not_a_diagnosis():
    """[[-inf]] at n = 1 is what the diagonal-masked entry gives; a k = -1 mask or an all -inf mask give
    it too, and are told apart on the probes (sizes >= 3)."""
    for mask in (lambda n: np.triu(np.full((n, n), -np.inf), k=-1), lambda n: np.full((n, n), -np.inf)):
        assert _diagnosed("causal_mask", mask, (1,)) is None
        where = localise("causal_mask", (1,), mask(1), _probe("causal_mask", mask))
        assert where.stage == "mask" and "hides positions below the diagonal" in where.sentence
    assert _diagnosed("causal_mask", lambda n: np.triu(np.full((n, n), -np.inf), k=0), (1,)).id == "diagonal-masked"


def test_a_coincidence_on_the_check_input_is_not_proven():
    """A hard-coded expansion = 4 equals "dtype ignored + bits" on (1, 64, 2, 1); the probes vary every
    argument, so that compound is not named: the count ignores the expansion it is given (the 4 written in its
    place), which is what is named, and its stage is the expansion."""
    fn = lambda n, d, b=2, e=4: n * 4 * d * b                          # noqa: E731
    args = (1, 64, 2, 1)
    assert agree(fn(*args), args[0] * args[1] * 8)                     # the coincidence
    assert _diagnosed("ffn_memory_bytes", fn, args).id == "expansion-missing"
    assert localise("ffn_memory_bytes", args, fn(*args), _probe("ffn_memory_bytes", fn)).stage == "expansion"


def test_a_cached_scale_equal_to_one_over_dk_by_chance_is_not_scale_by_dk():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))

    def cached(q, k, v, scale=1 / np.sqrt(16)):   # noqa: B008 (cached when d_k was 16: 1/4 = 1/d_k here)
        s = q @ k.T * scale
        w = np.exp(s - s.max(-1, keepdims=True))
        w /= w.sum(-1, keepdims=True)
        return w @ v, w
    assert _diagnosed("scaled_dot_product_attention", cached, (Q, K, V)) is None


def test_a_count_linear_in_n_is_named_whatever_stands_for_the_second_n():
    assert _diagnosed("attention_memory_bytes", lambda n, b=2: n * 64 * b, (1000, 2)).id == "linear-in-n"
    assert _diagnosed("attention_memory_bytes", lambda n, b=2: n * b, (1000, 2)).id == "linear-in-n"


def test_a_boolean_keep_mask_is_not_a_mask_for_multiplying():
    keep = lambda n: np.tril(np.ones((n, n), dtype=bool))              # noqa: E731
    assert _diagnosed("causal_mask", keep, (4,)) is None
    assert _diagnosed("causal_mask", lambda n: np.tril(np.ones((n, n))), (4,)).id == "multiplicative-mask"


def test_probes_are_ordinary_non_degenerate_and_large_where_stability_is_at_stake():
    """Every size >= 2 (>= 3 for a mask), the attention sizes all different; an entry that equals the right
    answer on every probe proves nothing, so softmax's probes include large ones for no-max-subtraction."""
    assert MIN_EVIDENCE >= 3
    x = np.random.default_rng(1).normal(size=(3, 4))
    softmax = probe_inputs("softmax", (x,))
    assert all(min(p[0].shape) >= 2 for p in softmax)
    assert sum(np.abs(p[0]).max() > 1e3 for p in softmax) >= MIN_EVIDENCE
    for Q, K, V in probe_inputs("cross_attention", (x, x[:2], x[:2, :3])):
        assert len({len(Q), len(K), Q.shape[1], V.shape[1]}) == 4 and min(len(Q), len(K), V.shape[1]) >= 2
    assert all(n >= 3 for (n,) in probe_inputs("causal_mask", (1,)))
    assert all(n >= 2 and d >= 16 for n, d, _, _ in probe_inputs("ffn_memory_bytes", (1, 64, 2, 1)))


def test_probes_are_reproducible_and_depend_on_the_check_input():
    a, b = probe_inputs("attention_memory_bytes", (3, 2)), probe_inputs("attention_memory_bytes", (3, 2))
    assert a == b and a != probe_inputs("attention_memory_bytes", (5, 2))
    assert all(n >= 2 for n, _ in a) and len({d for _, d in a}) == len(a)


def test_triples_are_bounded_and_tried_only_after_pairs():
    for function in ("scaled_dot_product_attention", "causal_attention", "cross_attention", "ffn_memory_bytes"):
        assert 0 < len(compounds_for(function, 3)) <= MAX_TRIPLES
    # a pair is preferred to a triple that would also explain it (none does here, but order is the rule)
    fn = lambda q, k, v: _softmax_pair(q @ k.T, v, axis=0)             # noqa: E731
    rng = np.random.default_rng(2)
    args = (rng.normal(size=(3, 4)), rng.normal(size=(6, 4)), rng.normal(size=(6, 5)))
    assert _diagnosed("scaled_dot_product_attention", fn, args).id == "no-scaling+softmax-wrong-axis"
    assert len(entries_for("scaled_dot_product_attention")) < len(compounds_for("scaled_dot_product_attention"))


def _softmax_pair(s, v, axis=-1, transpose=False):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    w = e / e.sum(axis=axis, keepdims=True)
    return w @ v, (w.T if transpose else w)


def test_three_mistakes_at_once_are_named_and_the_message_speaks_of_what_was_returned():
    """No scaling + softmax on axis 0 + weights returned transposed: every row the student returned sums
    to 1, so the row-sum message speaks of columns (it used to restate the transposed copy's rows)."""
    case = next(c for c in CASES if c.name == "triple__no_scaling_axis0_transposed")
    import autograder
    record = autograder.grade_namespace(case.namespace(), "triple")
    failed = {c.check: c for c in record.checks if not c.passed and c.grade_id == "ex1_attention"}
    assert {c.diagnosis for c in failed.values()} == {case.expected}
    message = failed["rows_sum_to_one"].message
    assert message.startswith("Column ") and "one column per query" in message and "Row " not in message
    assert "three mistakes together" in message


def test_localisation_reads_transposed_and_swapped_returns():
    rng = np.random.default_rng(3)
    Q, K, V = rng.normal(size=(4, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    out, w = _softmax_pair(Q @ K.T / np.sqrt(6), V)                   # scaled by sqrt(n_k): no entry
    transposed = localise("cross_attention", (Q, K, V), (out, w.T))
    assert transposed.stage == "scale" and "transposed, shape (6, 4)" in transposed.sentence
    swapped = localise("cross_attention", (Q, K, V), (w, out))
    assert swapped.stage == "scale" and "swapped" in swapped.sentence
    axis0 = localise("cross_attention", (Q, K, V), (out, _softmax_pair(Q @ K.T / 3, V, axis=0)[1].T))
    assert axis0.stage == "softmax-axis" and "each row of your weights sums to 1 instead of each column" in axis0.sentence


def test_a_probe_that_fails_proves_nothing():
    calls = []

    def flaky(n, b=2):
        calls.append(n)
        if len(calls) > 1:
            raise RuntimeError("only once")
        return n * b
    assert _diagnosed("attention_memory_bytes", flaky, (1000, 2)) is None


def test_classify_reads_a_record():
    case = next(c for c in CASES if c.name == "no_scaling__einsum")
    verdict = classify(case, "one")
    assert verdict.named and verdict.names == {"no-scaling"} and not verdict.wrong_names


# --- the same verdicts in the sandbox ----------------------------------------------------------

def _self_contained(case) -> bool:
    """The case is only exercise functions (no helpers or module constants), so it can be typed into
    the notebooks as it is."""
    import ast
    from autograder.samples.sample_class import EXERCISE_FUNCTIONS
    tree = ast.parse((TESTS / "fixtures" / "diagnosis" / f"{case.name}.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name not in EXERCISE_FUNCTIONS:
            return False
        if isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] != ["EXPECTED"]:
            return False
    return True


# every case goes through the sandbox as it is graded in-process: in-process answers are read as the wire carries
# them (an int beyond int64, refused there, is refused here), so nothing is left out
NOT_THROUGH_THE_SANDBOX: set = set()


def _one_per_group():
    seen, picked = set(), []
    for case in CASES:
        if case.group not in seen and _self_contained(case) and case.name not in NOT_THROUGH_THE_SANDBOX:
            seen.add(case.group)
            picked.append(case)
    return picked


@pytest.mark.parametrize("case", _one_per_group(), ids=lambda c: c.name)
def test_the_sandbox_gives_the_same_verdict(server, tmp_path, case):
    """Diagnosis and localisation call the student again (the probes): through the sandboxed worker they
    give the same diagnoses and stages as in-process, for one case of each label group."""
    import autograder
    from autograder.run.hardened import grade_submission
    from autograder.samples.sample_class import overrides_from_source
    from autograder.samples.synthetic import write_submission
    from conftest import RELEASE, ROOT, SOURCE
    from notebooks.test_notebook_semantics import namespaces
    overrides = overrides_from_source((TESTS / "fixtures" / "diagnosis" / f"{case.name}.py").read_text())
    folder = write_submission(RELEASE, SOURCE, tmp_path / "submitted" / "corpus" / "ch04_attention", overrides)
    hardened = grade_submission(folder, course=ROOT, server=server)
    in_process = autograder.grade_namespace(namespaces(overrides=overrides), "corpus")
    summary = lambda r: [(c.grade_id, c.check, c.passed, c.diagnosis, c.stage) for c in r.checks]  # noqa: E731
    assert summary(hardened) == summary(in_process)


@pytest.mark.parametrize("fn, stage, words", [
    (lambda x: np.exp(x) / np.exp(x).sum(axis=0, keepdims=True), "softmax-axis", "along axis 0 sum to 1"),
    (lambda x: np.exp(x / 2) / np.exp(x / 2).sum(-1, keepdims=True), "scale", "a softmax of x times 0.5"),
    (lambda x: x ** 2 / (x ** 2).sum(-1, keepdims=True), "scores", "not exponentials of the input"),
    (lambda x: np.exp(x) / 3.0, "softmax", "sum to values from"),
    (lambda x: np.exp(x * 1e4), "softmax", "finite values for the same input a hundred times smaller: exp() of inputs "
     "this large overflows"),
    (lambda x: np.exp(x) * np.nan, "nan", "also for the same input a hundred times smaller, where no exp() overflows"),
])
def test_an_uncatalogued_softmax_is_localised(fn, stage, words):
    x = np.random.default_rng(4).normal(size=(3, 5))
    with np.errstate(all="ignore"):
        where = localise("softmax", (x,), fn(x), _probe("softmax", fn))
    assert where.stage == stage and words in where.sentence
    right = np.exp(x) / np.exp(x).sum(-1, keepdims=True)
    assert localise("softmax", (x,), right) is None and localise("softmax", (x, 0), right) is not None
