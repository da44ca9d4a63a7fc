"""The sample class of `make demo` is built from the fixtures' text: one corpus of student code."""
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
