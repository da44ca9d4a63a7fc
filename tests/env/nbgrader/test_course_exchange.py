"""The instructor's own nbgrader workflow around `grade`: students fetch and submit through a temporary
exchange, the instructor collects, grades with the hardened grader, and `nbgrader release_feedback` /
`fetch_feedback` deliver our per-notebook pages (slow: several nbgrader commands)."""
import shutil

from autograder.run.batch import grade_batch
from nbgrader_fast import run_nbgrader
from autograder.samples.synthetic import fill_notebook, reference_answers
from autograder.intake.names import notebook_for
from batch_helpers import export_gradebook, make_class, read_csv
from conftest import NOTEBOOKS

A = "ch04_attention"


def _exchange(course, tmp, student: str) -> list[str]:
    return [f"--Exchange.root={tmp / 'exchange'}", f"--Exchange.cache={tmp / 'cache' / student}",
            "--course=attention-course", f"--student={student}", "--log-level=WARN"]


def _student_submits(course, tmp, student: str, overrides=None, fetch=True, rename=None, again=False) -> None:
    """fetch_assignment (or a copy of release/), fill the notebooks in, submit: what a student does
    (``rename``: notebook -> the name the student's copy ends up with; ``again``: a second submission of
    the same copy, now filled in with ``overrides``)."""
    import nbformat
    home = tmp / "home" / student
    home.mkdir(parents=True, exist_ok=again)
    if again:
        pass
    elif fetch:
        run_nbgrader(["fetch_assignment", A, *_exchange(course, tmp, student)], home, "fetch_assignment")
    else:
        shutil.copytree(course / "release" / A, home / A)
    answers = reference_answers(course / "source" / A)
    for path in sorted((home / A).glob("*.ipynb")):
        stem = notebook_for(path.name, answers)
        nb = fill_notebook(nbformat.read(path, as_version=4), answers[stem], overrides)
        nbformat.write(nb, path)
        if (rename or {}).get(stem):
            path.rename(path.with_name(rename[stem] + ".ipynb"))
    run_nbgrader(["submit", A, *_exchange(course, tmp, student)], home, "submit")


def test_release_and_fetch_feedback_deliver_our_pages(tmp_path):
    course = make_class(tmp_path, [])
    shutil.rmtree(course / "release")                     # release_assignment wants nbgrader's own release
    ex = [f"--Exchange.root={tmp_path / 'exchange'}", "--log-level=WARN"]
    (tmp_path / "exchange").mkdir()
    run_nbgrader(["generate_assignment", A], course, "generate_assignment")
    run_nbgrader(["release_assignment", A, *ex], course, "release_assignment")
    _student_submits(course, tmp_path, "ada")
    _student_submits(course, tmp_path, "bob", {"scaled_dot_product_attention": (
        "def scaled_dot_product_attention(Q, K, V):\n    w = softmax(Q @ K.T, axis=-1)\n    return w @ V, w\n")},
        fetch=False)
    run_nbgrader(["collect", A, *ex], course, "collect")
    assert (course / "submitted" / "ada" / A / "submission_secret.txt").exists()
    validate = run_nbgrader(["validate", f"submitted/ada/{A}/ex1_attention.ipynb"], course, "validate")
    assert "Success!" in validate.stdout                    # nbgrader's own commands work in the course

    result = grade_batch(course=course, workers=1, progress=False)
    totals = {r.student_id: r.total for r in result.records}
    assert totals["ada"] == 28 and totals["bob"] < 28
    for student in ("ada", "bob"):
        folder = course / "feedback" / student / A
        assert sorted(p.stem for p in folder.glob("*.html")) == NOTEBOOKS
        assert (folder / "timestamp.txt").exists() and (folder / "submission_secret.txt").exists()

    run_nbgrader(["release_feedback", A, *ex], course, "release_feedback")
    released = sorted((tmp_path / "exchange").rglob("*.html"))
    assert released and all(p.stat().st_mode & 0o044 == 0o044 for p in released)   # students' uids can read
    for student, expect in (("ada", "8 / 8"), ("bob", "no-scaling")):
        home = tmp_path / "home" / student
        run_nbgrader(["fetch_feedback", A, *_exchange(course, tmp_path, student)], home, "fetch_feedback")
        pages = sorted((home / A / "feedback").glob("*/*.html"))
        assert [p.stem for p in pages] == NOTEBOOKS, pages
        ex1 = (home / A / "feedback").glob("*/ex1_attention.html").__next__().read_text()
        assert expect in ex1 and "ex1_attention.ipynb" in ex1


def test_feedback_reaches_its_owner_only(tmp_path):
    """A class with a shared secret (cid copied bob's whole submission folder), a missing one, a link to a
    classmate's and malformed ones: nbgrader's feedback layout holds only pages release_feedback can deliver
    to their owner (a page without a secret once made it stop with FileNotFoundError for everyone after it;
    a shared secret delivered bob's feedback to cid), the others are listed for the instructor, and the
    shared and linked secrets are flagged for review."""
    from nbgrader.utils import notebook_hash

    from autograder.records import read_record
    course = make_class(tmp_path, [])
    shutil.rmtree(course / "release")
    ex = [f"--Exchange.root={tmp_path / 'exchange'}", "--log-level=WARN"]
    (tmp_path / "exchange").mkdir()
    run_nbgrader(["generate_assignment", A], course, "generate_assignment")
    run_nbgrader(["release_assignment", A, *ex], course, "release_assignment")
    for student in ("ada", "bob"):
        _student_submits(course, tmp_path, student, fetch=False)
    run_nbgrader(["collect", A, *ex], course, "collect")
    sub = course / "submitted"
    for copy, of in (("cid", "bob"), ("dan", "ada"), ("eve", "ada"), ("fay", "ada"), ("gus", "ada")):
        shutil.copytree(sub / of / A, sub / copy / A)
    (sub / "dan" / A / "submission_secret.txt").unlink()
    (sub / "eve" / A / "submission_secret.txt").unlink()
    (sub / "eve" / A / "submission_secret.txt").symlink_to(sub / "ada" / A / "submission_secret.txt")
    (sub / "fay" / A / "submission_secret.txt").write_text("not a secret")
    (sub / "gus" / A / "submission_secret.txt").write_text((sub / "gus" / A / "submission_secret.txt")
                                                           .read_text() + "\n")   # nbgrader hashes it as it is
    stale = course / "feedback" / "dan" / A / "ex1_attention.html"                 # e.g. an earlier run's page
    stale.parent.mkdir(parents=True)
    stale.write_text("<p>old</p>")

    result = grade_batch(course=course, workers=2, progress=False)
    out = course / "grading"
    pages = {s: sorted(p.stem for p in (course / "feedback" / s / A).glob("*.html"))
             for s in ("ada", "bob", "cid", "dan", "eve", "fay", "gus")}
    assert pages == {"ada": NOTEBOOKS, "bob": [], "cid": [], "dan": [], "eve": [], "fay": [], "gus": []}
    report = (out / "report.html").read_text()
    section = report[report.index("Feedback nbgrader cannot deliver"):]
    assert all(f"&#x27;{s}&#x27;" in section for s in ("bob", "cid", "dan", "eve", "fay", "gus"))
    assert "&#x27;ada&#x27;" not in section and "the same as that of" in section
    for student, other in (("bob", "cid"), ("cid", "bob")):
        record = read_record(out, student, A)
        assert record.needs_review and any("submission_secret.txt is the same as a classmate" in p
                                           for p in record.integrity)
        assert any(f"'{other}'" in line for line in record.for_instructor) and not any(other in p for p in record.integrity)
    assert any("submission_secret.txt is a link" in p for p in read_record(out, "eve", A).integrity)
    assert result.errors == []
    kept = {s for s in pages if (course / "autograded" / s / A / "submission_secret.txt").exists()}
    assert kept == {"ada"}          # autograded/ holds a secret only where it is the submission's own, as feedback/

    run_nbgrader(["release_feedback", A, *ex], course, "release_feedback")           # never stops halfway
    ada_secret = (sub / "ada" / A / "submission_secret.txt").read_text()
    released = sorted(p.name for p in (tmp_path / "exchange").rglob("*.html"))
    assert released == sorted(f"{notebook_hash(secret=ada_secret, notebook_id=nb)}.html" for nb in NOTEBOOKS)
    for student, expect in (("ada", NOTEBOOKS), ("bob", [])):
        home = tmp_path / "home" / student
        run_nbgrader(["fetch_feedback", A, *_exchange(course, tmp_path, student)], home, "fetch_feedback")
        assert sorted(p.stem for p in (home / A / "feedback").glob("*/*.html")) == expect


def _released_course(tmp_path):
    """A course whose assignment is released to a temporary exchange."""
    course = make_class(tmp_path, [])
    shutil.rmtree(course / "release")
    (tmp_path / "exchange").mkdir()
    ex = [f"--Exchange.root={tmp_path / 'exchange'}", "--log-level=WARN"]
    run_nbgrader(["generate_assignment", A], course, "generate_assignment")
    run_nbgrader(["release_assignment", A, *ex], course, "release_assignment")
    return course, ex


def test_a_renamed_notebooks_page_is_delivered_under_the_name_submitted(tmp_path):
    course, ex = _released_course(tmp_path)
    home = tmp_path / "home" / "ada"
    _student_submits(course, tmp_path, "ada", rename={"ex1_attention": "ex1_attention (1)"})
    run_nbgrader(["collect", A, *ex], course, "collect")
    assert (course / "submitted" / "ada" / A / "ex1_attention (1).ipynb").exists()
    result = grade_batch(course=course, workers=1, progress=False)
    assert result.records[0].total == 28 and not result.errors
    pages = sorted(p.name for p in (course / "feedback" / "ada" / A).glob("*.html"))
    assert pages == ["ex1_attention (1).html", "ex2_causal_mask.html", "ex3_memory.html", "ex4_cross_attention.html"]
    report = (course / "grading" / "report.html").read_text()
    assert "Feedback nbgrader cannot deliver" not in report

    run_nbgrader(["release_feedback", A, *ex], course, "release_feedback")
    run_nbgrader(["fetch_feedback", A, *_exchange(course, tmp_path, "ada")], home, "fetch_feedback")
    fetched = sorted(p.name for p in (home / A / "feedback").glob("*/*.html"))
    assert fetched == pages
    page = next((home / A / "feedback").glob("*/ex1_attention (1).html")).read_text()
    assert "8 / 8" in page and "was graded as ex1_attention.ipynb" in page      # the note on the rename too


def test_nbgraders_own_feedback_after_grade_is_released_and_fetched(tmp_path):
    """An instructor used to nbgrader runs `nbgrader generate_feedback --force` after `grade`: its pages
    replace ours, and it copies the secret from autograded/ as after `nbgrader autograde`, so
    `release_feedback` delivers them (it stopped with FileNotFoundError: autograded/ held no
    submission_secret.txt) and the student's page names the misconception."""
    course, ex = _released_course(tmp_path)
    _student_submits(course, tmp_path, "bob", {"scaled_dot_product_attention": (
        "def scaled_dot_product_attention(Q, K, V):\n    w = softmax(Q @ K.T, axis=-1)\n    return w @ V, w\n")})
    run_nbgrader(["collect", A, *ex], course, "collect")
    assert grade_batch(course=course, workers=1, progress=False).records[0].total < 28
    secret = (course / "submitted" / "bob" / A / "submission_secret.txt").read_bytes()
    assert (course / "autograded" / "bob" / A / "submission_secret.txt").read_bytes() == secret

    run_nbgrader(["generate_feedback", A, "--force", "--log-level=WARN"], course, "generate_feedback")
    assert (course / "feedback" / "bob" / A / "submission_secret.txt").read_bytes() == secret
    run_nbgrader(["release_feedback", A, *ex], course, "release_feedback")
    home = tmp_path / "home" / "bob"
    run_nbgrader(["fetch_feedback", A, *_exchange(course, tmp_path, "bob")], home, "fetch_feedback")
    assert sorted(p.stem for p in (home / A / "feedback").glob("*/*.html")) == NOTEBOOKS
    page = next((home / A / "feedback").glob("*/ex1_attention.html")).read_text()
    assert "the scores are not scaled: divide Q K^T by sqrt(d_k)" in page      # the misconception, named


def test_a_resubmission_collected_with_update_is_regraded_by_resume(tmp_path, capsys):
    from autograder.__main__ import main
    course, ex = _released_course(tmp_path)
    wrong = {"scaled_dot_product_attention": "def scaled_dot_product_attention(Q, K, V):\n"
             "    w = softmax(Q @ K.T, axis=-1)\n    return w @ V, w\n"}
    _student_submits(course, tmp_path, "ada", wrong)
    _student_submits(course, tmp_path, "bob", {"causal_mask": "def causal_mask(n):\n"
                                                "    return np.triu(np.full((n, n), -np.inf))\n"})
    run_nbgrader(["collect", A, *ex], course, "collect")
    assert main(["grade", "--course", str(course), "--workers", "1"]) == 0
    bob = export_gradebook(course)["bob"]
    first = (course / "submitted" / "ada" / A / "timestamp.txt").read_text()
    _student_submits(course, tmp_path, "ada", fetch=False, again=True)       # ada fixes her work and submits again
    run_nbgrader(["collect", "--update", A, *ex], course, "collect --update")
    assert (course / "submitted" / "ada" / A / "timestamp.txt").read_text() != first
    capsys.readouterr()
    assert main(["grade", "--course", str(course), "--workers", "1", "--resume"]) == 0
    out = capsys.readouterr().out
    assert "1 submission changed since graded" in out and "graded 1, skipped 1" in out
    rows = {r["student_id"]: r for r in read_csv(course / "grading" / "grades.csv")}
    assert rows["ada"]["total"] == "28" and rows["ada"]["submitted"].startswith(
        (course / "submitted" / "ada" / A / "timestamp.txt").read_text()[:19])
    assert export_gradebook(course) == {"ada": 28.0, "bob": bob} and bob < 28
