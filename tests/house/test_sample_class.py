"""The sample class of `make demo` is built from the fixtures' text: one corpus of student code."""
import importlib

import pytest

from autograder.course import resources
from autograder.samples import sample_class
from test_rubric_diagnosis import FIXTURES


def test_every_fixture_is_a_student_of_the_sample_class():
    students = sample_class.students()
    assert {n.replace("_", "-") for n in FIXTURES} - {"correct-plain"} <= set(students)
    assert set(resources.fixture_sources()) == set(FIXTURES)


def test_a_fixture_becomes_the_functions_a_student_typed():
    source = ('"""doc"""\nimport math\nimport numpy as np\n\nfrom .correct_plain import *\n\n'
              'DIAGNOSIS = "x"\n\ndef helper():\n    return 1\n\n\ndef causal_mask(n):\n'
              '    return np.zeros((n, n)) * math.pi\n\nLOSES = {}\n')
    assert sample_class.overrides_from_source(source) == {
        "causal_mask": "import math\ndef causal_mask(n):\n    return np.zeros((n, n)) * math.pi\n"}


def test_the_class_can_be_built_from_text_alone():
    sources = {"no_scaling": resources.fixture_sources()["no_scaling"], "correct_plain": "x = 1\n"}
    students = sample_class.students(sources)
    assert "def scaled_dot_product_attention" in students["no-scaling"]["scaled_dot_product_attention"]
    assert "correct-plain" not in students and students["no-scaling-2"] == students["no-scaling"]



def test_hostile_students_hand_in_the_code_of_corpus_attacks():
    """Each hostile student is one attack of tests/adversarial/ (read as text), with its TARGET and CODE."""
    students = sample_class.students()
    for student, attack in sample_class.HOSTILE_ATTACKS.items():
        module = importlib.import_module(f"adversarial.{attack}")
        assert students[student] == {module.TARGET: module.CODE.lstrip("\n")}, student
    assert students["hostile-exits"] == {"crossover_length": "import os\nos._exit(1)\n"}
    assert set(resources.attack_sources()) >= set(sample_class.HOSTILE_ATTACKS.values())


@pytest.mark.parametrize("text", ['TARGET = "softmax"\nCODE = __import__("os").getcwd()\n',
                                  'TARGET = "not_a_function"\nCODE = "x = 1"\n', 'CODE = "x = 1"\n'])
def test_an_attack_is_read_as_literals_never_run(monkeypatch, text):
    monkeypatch.setattr(sample_class, "HOSTILE_ATTACKS", {"hostile-x": "attack"})
    with pytest.raises(ValueError):
        sample_class.hostile_students({"attack": text})
