"""A plain (non-editable) install of the wheel works outside the repository and never reads it, nbgrader's own
autograde included (here with nbgrader's tests: it runs nbgrader's commands)."""
import csv
import shutil
import tarfile
import zipfile

import pytest

from conftest import RELEASE, ROOT, SOURCE
from wheel_helpers import build_sdist, build_wheel, install_wheel

CLASS = ["correct-1", "no-scaling", "mask-after-softmax"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    return install_wheel(tmp, build_wheel(tmp))


@pytest.fixture(scope="module")
def work(installed, tmp_path_factory):
    """A folder outside the repository with a course made by `init` and the demo run in it."""
    folder = tmp_path_factory.mktemp("instructor")
    assert ROOT not in folder.parents
    init = installed.run(str(installed.bin / "attention-autograder"), "init", "course", cwd=folder)
    assert init.returncode == 0, init.stderr
    demo = installed.run(str(installed.python), "-m", "autograder", "demo", "--workers", "2", cwd=folder)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    return folder, init.stdout, demo.stdout


def _grades(path):
    with open(path) as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


def test_wheel_carries_the_course_byte_for_byte(installed):
    with zipfile.ZipFile(installed.wheel) as wheel:
        def packaged(name):
            return wheel.read(f"autograder/course_files/{name}")
        assert packaged("nbgrader_config.py") == (ROOT / "nbgrader_config.py").read_bytes()
        for kind, folder in (("source", SOURCE), ("release", RELEASE)):
            for nb in folder.glob("*.ipynb"):
                assert packaged(f"{kind}/ch04_attention/{nb.name}") == nb.read_bytes(), nb
        for fixture in (ROOT / "tests/fixtures/impl").glob("*.py"):
            assert packaged(f"fixtures/{fixture.name}") == fixture.read_bytes(), fixture
        for attack in (ROOT / "tests/adversarial").glob("*.py"):       # the hostile students' code
            assert packaged(f"adversarial/{attack.name}") == attack.read_bytes(), attack


def test_sdist_carries_the_course_as_files(tmp_path):
    sdist = build_sdist(tmp_path)
    with tarfile.open(sdist) as tar:
        members = {m.name.split("/", 1)[1]: m for m in tar.getmembers() if "/" in m.name}
        for nb in SOURCE.glob("*.ipynb"):
            member = members[f"autograder/course_files/source/ch04_attention/{nb.name}"]
            assert member.isfile() and tar.extractfile(member).read() == nb.read_bytes()
        assert members["autograder/course_files/nbgrader_config.py"].isfile()
        assert members["autograder/course_files/fixtures/no_scaling.py"].isfile()
        assert members["autograder/course_files/adversarial/disrupt_exit_in_crossover_length_cell.py"].isfile()


def test_packages_import_from_the_new_environment_only(installed, tmp_path):
    probe = ("import sys, autograder, solutions, autograder.grading.rubric, autograder.course.resources as r\n"
             "print(autograder.__file__); print(solutions.__file__); print(r.course_files())\n"
             "print(any(p and p.startswith(sys.argv[1]) and '.venv' not in p for p in sys.path))")
    proc = installed.run(str(installed.python), "-c", probe, str(ROOT), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    *files, repo_on_path = proc.stdout.split("\n")[:4]
    assert all(f.startswith(str(installed.site)) for f in files), files
    assert repo_on_path == "False"


def test_init_and_demo_work_outside_the_repository(work):
    folder, init_out, demo_out = work
    course = folder / "course"
    assert sorted(p.name for p in course.iterdir()) == ["gradebook.db", "nbgrader_config.py", "release", "source", "submitted"]
    assert "python -m autograder grade --course ." in init_out
    assert "submissions graded" in demo_out and (folder / "demo" / "grading" / "report.html").is_file()
    assert _grades(folder / "demo" / "grading" / "grades.csv")["correct-1"]["total"] == "28"


def test_grade_a_small_class_with_the_installed_package(installed, work):
    folder, _, _ = work
    course = folder / "course"
    for student in CLASS:
        shutil.copytree(folder / "demo" / "submitted" / student, course / "submitted" / student)
    proc = installed.run(str(installed.python), "-m", "autograder", "grade", "--course", "course",
                         "--workers", "1", cwd=folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 submissions graded:" in proc.stdout and proc.stdout.split()[:5] == ["student", "total", "late",
                                                                                 "review", "diagnoses"]
    ours = _grades(course / "grading" / "grades.csv")
    demo = _grades(folder / "demo" / "grading" / "grades.csv")
    assert sorted(ours) == sorted(CLASS) and ours["correct-1"]["total"] == ours["correct-1"]["max_total"]
    assert {s: ours[s]["total"] for s in CLASS} == {s: demo[s]["total"] for s in CLASS}


def test_check_and_release_work_from_any_folder(installed, work):
    folder, _, _ = work
    loose = folder / "loose"
    loose.mkdir()
    shutil.copy(folder / "demo/submitted/no-scaling/ch04_attention/ex1_attention.ipynb", loose)
    check = installed.run(str(installed.python), "-m", "autograder", "check", "ex1_attention.ipynb", cwd=loose)
    assert check.returncode == 0 and "[no-scaling]" in check.stdout, check.stdout + check.stderr
    release = installed.run(str(installed.python), "-m", "autograder", "release", "--course", "course", cwd=folder)
    assert release.returncode == 0, release.stderr
    assert len(list((folder / "course/release/ch04_attention").glob("*.ipynb"))) == 4


def test_nbgrader_autograde_uses_the_installed_package(installed, work):
    """nbgrader's own autograde grades through the installed package's sandboxed step (the course config)."""
    folder, _, _ = work
    course = folder / "nbgrader-course"
    shutil.copytree(folder / "course", course, ignore=shutil.ignore_patterns("grading", "submitted"))
    shutil.copytree(folder / "demo" / "submitted" / "no-scaling", course / "submitted" / "no-scaling")
    for args in (["generate_assignment", "--assignment=ch04_attention", "--force"],
                 ["autograde", "--assignment=ch04_attention", "--student=no-scaling", "--force"], ["export"]):
        proc = installed.run(str(installed.python), "-m", "nbgrader", *args, "--log-level=WARN", cwd=course)
        assert proc.returncode == 0, f"nbgrader {args[0]}: {proc.stdout}{proc.stderr}"
    score = float(_grades(course / "grades.csv")["no-scaling"]["score"])
    assert score == float(_grades(folder / "demo" / "grading" / "grades.csv")["no-scaling"]["total"]) < 28
    graded = (course / "autograded/no-scaling/ch04_attention/ex1_attention.ipynb").read_text()
    assert "[PASS]" in graded and "grade_cell(" not in graded      # the sandboxed step, not the kernel


LEAKY_SOFTMAX = """
try:
    LEAK = len(open({path!r}).read())
except OSError:
    LEAK = 0

def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True) * (2 if LEAK else 1)
"""


def test_student_code_cannot_read_the_installed_course(installed, work):
    """The wheel puts solutions and hidden tests in site-packages: the sandbox must hide them."""
    from autograder.sandbox import landlock
    from autograder.samples.synthetic import write_submission
    if not landlock.abi_version():
        pytest.skip("this kernel has no Landlock, the layer that hides files from student code")
    folder, _, _ = work
    target = installed.site / "autograder/course_files/source/ch04_attention/ex1_attention.ipynb"
    assert target.is_file()
    course = folder / "course"
    sub = write_submission(course / "release/ch04_attention", course / "source/ch04_attention",
                           course / "submitted/leaky/ch04_attention", {"softmax": LEAKY_SOFTMAX.format(path=str(target))})
    proc = installed.run(str(installed.python), "-m", "autograder", "check", str(sub / "ex1_attention.ipynb"),
                         "--json", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    import json
    softmax = [c for c in json.loads(proc.stdout)["checks"] if c["grade_id"] == "ex1_softmax"]
    assert softmax and all(c["passed"] for c in softmax), softmax


def test_the_audit_hook_sees_a_read_of_the_repository(installed, tmp_path):
    """The check below can fail: a process that does read the repository is logged."""
    log = tmp_path / "reads.log"
    probe = f"open({str(ROOT / 'README.md')!r}).read(); import os; os.listdir({str(ROOT / 'source')!r})"
    proc = installed.run(str(installed.python), "-c", probe, cwd=tmp_path, audit_log=log)
    assert proc.returncode == 0, proc.stderr
    assert "open " + str(ROOT / "README.md") in log.read_text() and "os.listdir" in log.read_text()


def test_nothing_read_the_repository(installed, work):
    """Every Python process of the new environment ran with the audit hook; none touched the repo."""
    log = installed.audit_log.read_text() if installed.audit_log.exists() else ""
    assert log == ""
