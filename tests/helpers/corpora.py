"""The test corpora and what each case of them expects, in one vocabulary: ``Expected``, read by ``load``.

A corpus is a package of small modules under tests/; each module declares, at its top level, what
grading it must give, in its corpus's words:

- ``fixtures/impl`` (implementations): ``DIAGNOSIS``, the catalogue or compound id its wrong function is
  named by, or None where nothing may be named, ``LOSES`` (grade_id -> points lost), ``SAYS`` (what a message
  says) and ``STAGE`` (the stage named, if any); a ``correct_*`` module sets none of them (full marks);
- ``fixtures/diagnosis`` and ``fixtures/diagnosis_heldout`` (the labelled diagnosis cases): ``EXPECTED``,
  a catalogue or compound id, or ``"localised"``, ``"unnamed"``, ``"correct"``;
- ``adversarial`` (attacks): ``KIND`` (probe, cheat, disruption, damage), ``TARGET`` (the function it
  replaces, or ``"cell"``; a damage sets none: its ``damage(folder)`` does the harm), ``LAYER`` (the row of docs/reference/sandbox-layers.md's tables that must stop it) and
  ``EXPECT`` (``{"score": ..., "review": True | False | "any"}``).

``load(corpus)`` gives one frozen ``Expected`` per module, in name order, and refuses, naming the module,
one whose declaration is missing or not of its corpus's form.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass

CORPORA = {"impl": "fixtures.impl", "diagnosis": "fixtures.diagnosis",
           "diagnosis_heldout": "fixtures.diagnosis_heldout", "diagnosis_fresh": "fixtures.diagnosis_fresh",
           "diagnosis_fresh5": "fixtures.diagnosis_fresh5",
           "adversarial": "adversarial"}
LABELS = ("localised", "unnamed", "correct")          # the diagnosis labels that are not an id
SCORES = ("honest_wrong", "at_most_honest_wrong", "honest_right", "at_most_honest_right",
          "below_honest_right", "any")
KINDS = ("probe", "cheat", "disruption", "damage")


class CorpusError(ValueError):
    """A module of a corpus does not say what it expects, or says it in another form."""


@dataclass(frozen=True)
class Expected:
    corpus: str                   # a key of CORPORA
    name: str                     # the module's name in its package
    diagnosis: str | None = None  # impl and diagnosis cases: the id (or label) the diagnosis must give
    loses: dict | None = None     # impl, a wrong one: grade_id -> the points it must lose there
    stage: str | None = None      # impl, a wrong one: the stage its failed checks name (None: none)
    says: str | None = None       # impl, a wrong one: what one of its failed checks' messages says
    score: str | None = None      # attacks: the total, against honest students' (one of SCORES)
    review: bool | str | None = None   # attacks: flagged for review (True, False or "any")
    kind: str | None = None       # attacks: one of KINDS
    target: str | None = None     # attacks: the function replaced, or "cell" (None: a damage)
    layer: str | None = None      # attacks: what must stop it

    @property
    def module_name(self) -> str:
        return f"{CORPORA[self.corpus]}.{self.name}"

    def module(self):
        return importlib.import_module(self.module_name)


def load(corpus: str) -> list[Expected]:
    """What every module of ``corpus`` expects (empty when the corpus is not there)."""
    try:
        package = importlib.import_module(CORPORA[corpus])
    except ModuleNotFoundError:
        return []
    names = sorted(m.name for m in pkgutil.iter_modules(package.__path__))
    return [expected_of(corpus, name, importlib.import_module(f"{CORPORA[corpus]}.{name}")) for name in names]


def expected_of(corpus: str, name: str, module) -> Expected:
    """The ``Expected`` a corpus's module declares; CorpusError naming it when it declares none or a wrong one."""
    where = f"{CORPORA[corpus].replace('.', '/')}/{name}.py"
    if corpus == "impl":
        diagnosis = getattr(module, "DIAGNOSIS", None) or None
        correct = name.startswith("correct_")
        if (correct and diagnosis) or not (correct or hasattr(module, "DIAGNOSIS")):
            raise CorpusError(f"{where}: a correct_* module names no DIAGNOSIS; any other sets DIAGNOSIS (the id "
                              "its mistake is named by, or None where nothing may be named)")
        if correct:
            return Expected(corpus, name)
        if not isinstance(getattr(module, "LOSES", None), dict) or not isinstance(getattr(module, "SAYS", None), str):
            raise CorpusError(f"{where}: a wrong implementation sets LOSES (grade_id -> points lost) and SAYS "
                              "(what its messages say)")
        return Expected(corpus, name, diagnosis=diagnosis, loses=dict(module.LOSES),
                        stage=getattr(module, "STAGE", None), says=module.SAYS)
    if corpus in ("diagnosis", "diagnosis_heldout", "diagnosis_fresh", "diagnosis_fresh5"):
        label = getattr(module, "EXPECTED", None)
        if not isinstance(label, str) or not label:
            raise CorpusError(f"{where}: EXPECTED must be a catalogue id or one of {', '.join(LABELS)}")
        return Expected(corpus, name, diagnosis=label)
    expect = getattr(module, "EXPECT", None)
    kind, target, layer = (getattr(module, a, None) for a in ("KIND", "TARGET", "LAYER"))
    if (not isinstance(expect, dict) or expect.get("score") not in SCORES
            or expect.get("review") not in (True, False, "any") or kind not in KINDS
            or not isinstance(target, str) and kind != "damage" or not isinstance(layer, str)):
        raise CorpusError(f"{where}: an attack sets KIND (one of {', '.join(KINDS)}), TARGET (but damage), LAYER and "
                          f"EXPECT = {{'score': one of {', '.join(SCORES)}, 'review': True, False or 'any'}}")
    return Expected(corpus, name, score=expect["score"], review=expect["review"], kind=kind, target=target,
                    layer=layer)
