"""Every module of every test corpus says what it expects in its corpus's form (``corpora.load``); a
module that says nothing, or says it in another form, is refused by name."""
from __future__ import annotations

import types

import pytest

import corpora


@pytest.mark.parametrize("corpus", sorted(corpora.CORPORA))
def test_every_case_of_every_corpus_says_what_it_expects(corpus):
    found = corpora.load(corpus)
    assert found or corpus == "diagnosis_heldout", f"the {corpus} corpus is empty"
    assert [e.name for e in found] == sorted(e.name for e in found) and all(e.corpus == corpus for e in found)
    for e in found:
        if corpus == "adversarial":
            assert e.kind in corpora.KINDS and e.score in corpora.SCORES and e.review in (True, False, "any")
        elif corpus == "impl":
            assert e.name.startswith("correct_") == (e.loses is None)
        else:
            assert e.diagnosis


def test_the_held_out_corpus_is_read_with_the_development_corpus_convention():
    """tests/fixtures/diagnosis_heldout declares EXPECTED as tests/fixtures/diagnosis does."""
    held = corpora.load("diagnosis_heldout")
    labels = {e.diagnosis for e in corpora.load("diagnosis")}
    assert held and {e.diagnosis for e in held} & labels


def test_a_case_that_says_nothing_or_another_form_is_refused_by_name():
    blank = types.ModuleType("x")
    with pytest.raises(corpora.CorpusError, match="fixtures/diagnosis/x.py: EXPECTED"):
        corpora.expected_of("diagnosis", "x", blank)
    with pytest.raises(corpora.CorpusError, match="fixtures/impl/wrong_x.py"):
        corpora.expected_of("impl", "wrong_x", blank)
    with pytest.raises(corpora.CorpusError, match="fixtures/impl/correct_x.py"):
        corpora.expected_of("impl", "correct_x", types.SimpleNamespace(DIAGNOSIS="no-scaling"))
    attack = types.SimpleNamespace(KIND="probe", TARGET="causal_mask", LAYER="l", EXPECT={"score": "sometimes",
                                                                                          "review": True})
    with pytest.raises(corpora.CorpusError, match="adversarial/a.py"):
        corpora.expected_of("adversarial", "a", attack)
    attack.EXPECT = {"score": "honest_wrong", "review": "any"}
    assert corpora.expected_of("adversarial", "a", attack) == corpora.Expected(
        "adversarial", "a", score="honest_wrong", review="any", kind="probe", target="causal_mask", layer="l")
