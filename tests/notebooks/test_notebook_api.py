"""autograder.notebook: what the hidden-test cells call."""
import warnings

import numpy as np

import solutions
from autograder.notebook import current_student_id, grade_cell


def test_student_id_from_nbgrader_autograde_folder(tmp_path, monkeypatch):
    folder = tmp_path / "autograded" / "zoe" / "ch04_attention"
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert current_student_id() == "zoe"
    monkeypatch.delenv("NBGRADER_EXECUTION")
    assert current_student_id() == "anonymous"


def test_grade_cell_prints_to_stdout_only_and_returns_points(capsys):
    def noisy_softmax(x, axis=-1):
        warnings.warn("a student's warning")  # noqa: B028 (as a student writes it)
        import sys
        print("debug output", file=sys.stderr)
        return solutions.softmax(x, axis=axis)
    score = grade_cell("ex1_softmax", {"softmax": noisy_softmax}, "s1")
    captured = capsys.readouterr()
    assert score == 3.0 and captured.err == ""
    assert captured.out.count("[PASS]") == 3


def test_grade_cell_partial_credit(capsys):
    def no_max(x, axis=-1):
        e = np.exp(np.asarray(x, float))
        return e / e.sum(axis=axis, keepdims=True)
    assert grade_cell("ex1_softmax", {"softmax": no_max}, "s1") == 2.0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["[PASS] rows_sum_to_one (1/1): ok", "[PASS] any_axis (1/1): ok"]
    assert lines[2].startswith("[FAIL] stable_for_large_inputs (0/1): ") and "subtract the maximum" in lines[2]
