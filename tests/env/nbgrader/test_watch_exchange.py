"""Feedback on submit, end to end through nbgrader's own exchange: students fetch and submit with
nbgrader (each with their own folder and exchange cache), `watch` grades and publishes, each student's
`nbgrader fetch_feedback` brings back their own pages, with the scores and diagnoses `grade` gives
(slow: nbgrader's commands and several starts of the service; one course for the whole module)."""
import os
import re
import signal
import shutil
import time

import nbformat
import pytest

from nbgrader_fast import run_nbgrader
from autograder.samples.synthetic import fill_notebook, reference_answers
from conftest import NOTEBOOKS
from autograder.watch.publish import page_file
from run_tree import TreeRun
from watch_helpers import (A, done, events, exchange_course, fetched_pages, of_kind, student_args,
                           submit_like_nbgrader, wait_for, watch_command)

NO_SCALING = {"scaled_dot_product_attention": (
    "def scaled_dot_product_attention(Q, K, V):\n    w = softmax(Q @ K.T, axis=-1)\n    return w @ V, w\n")}


class Exchange:
    def __init__(self, tmp):
        self.tmp = tmp
        self.course = exchange_course(tmp, 'c.FeedbackOnSubmit.limit = "3/day"\n')
        self.inbound = tmp / "exchange" / "attention-course" / "inbound"
        self.feedback = tmp / "exchange" / "attention-course" / "feedback"
        self.run = None
        self.gradebook = (self.course / "gradebook.db").read_bytes()
        self.started = time.time()

    def start(self, *extra):
        self.run = TreeRun(watch_command(self.course, *extra))
        return self.run

    def submit(self, student, overrides=None, fetch=True):
        """What a student does: fetch_assignment (or a copy of the release), fill in, nbgrader submit."""
        home = self.tmp / "home" / student
        home.mkdir(parents=True, exist_ok=True)
        if fetch:
            run_nbgrader(["fetch_assignment", A, *student_args(self.tmp, student)], home, "fetch_assignment")
        else:
            shutil.copytree(self.course / "release" / A, home / A)
        answers = reference_answers(self.course / "source" / A)
        for path in sorted((home / A).glob("*.ipynb")):
            nbformat.write(fill_notebook(nbformat.read(path, as_version=4), answers[path.stem], overrides), path)
        before = set(os.listdir(self.inbound))
        run_nbgrader(["submit", A, *student_args(self.tmp, student)], home, "submit")
        return (set(os.listdir(self.inbound)) - before).pop()

    def fetch_feedback(self, student):
        home = self.tmp / "home" / student
        home.mkdir(parents=True, exist_ok=True)
        run_nbgrader(["fetch_feedback", A, *student_args(self.tmp, student)], home, "fetch_feedback")
        return fetched_pages(home)


@pytest.fixture(scope="module")
def ex(tmp_path_factory):
    exchange = Exchange(tmp_path_factory.mktemp("watch"))
    exchange.start()
    yield exchange
    if exchange.run and exchange.run.launcher.poll() is None:
        exchange.run.signal(signal.SIGTERM)
        exchange.run.end(within=30)


def _latest_pages(ex, student):
    """The pages fetch_feedback would bring for the student's last submission (found as it finds them)."""
    cache = max((ex.tmp / "cache" / student / "attention-course").iterdir())
    secret = (cache / "submission_secret.txt").read_text()
    return {nb: (ex.feedback / page_file(secret, nb)).read_text() for nb in NOTEBOOKS}


def _score(page: str) -> str:
    return re.search(r"Score: ([\d.]+ / \d+)", page).group(1)


def test_each_student_fetches_their_own_pages(ex):
    ada = ex.submit("ada")
    bob = ex.submit("bob", NO_SCALING, fetch=False)
    wait_for(lambda: done(ex.course, ada) and done(ex.course, bob), what="ada's and bob's pages", run=ex.run)
    pages = {s: ex.fetch_feedback(s) for s in ("ada", "bob")}
    for student, other in (("ada", "bob"), ("bob", "ada")):
        (stamp, mine), = pages[student].items()
        assert sorted(mine) == NOTEBOOKS
        for page in mine.values():
            assert f"Feedback for {student}:" in page and f"Feedback for {other}" not in page
            assert "Pre-deadline feedback" in page and re.search(r"made \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", page)
            assert "BEGIN HIDDEN TESTS" not in page and "grade_cell(" not in page
    assert _score(pages["ada"].popitem()[1]["ex1_attention"]) == "8 / 8"
    bob_ex1 = next(iter(pages["bob"].values()))["ex1_attention"]
    assert _score(bob_ex1) == "6 / 8" and "no-scaling" in bob_ex1


def test_a_resubmission_gets_new_pages(ex):
    again = submit_like_nbgrader(ex.course, ex.tmp, "ada", "mask-after-softmax")
    wait_for(lambda: done(ex.course, again), what="ada's second pages", run=ex.run)
    pages = ex.fetch_feedback("ada")
    assert len(pages) == 2                                   # one timestamp folder per submission
    first, second = (pages[k] for k in sorted(pages))
    assert _score(first["ex2_causal_mask"]) == "9 / 9"
    assert "mask-after-softmax" in second["ex2_causal_mask"] and _score(second["ex2_causal_mask"]) != "9 / 9"


def test_the_limit_holds(ex):
    names = [submit_like_nbgrader(ex.course, ex.tmp, "cy", sample) for sample in ("no-scaling", "no-scaling")]
    wait_for(lambda: all(done(ex.course, n) for n in names), what="cy's first submissions", run=ex.run)
    names += [submit_like_nbgrader(ex.course, ex.tmp, "cy", sample)         # fixes no-scaling after feedback
              for sample in ("correct-1", "correct-1")]
    wait_for(lambda: all(done(ex.course, n) for n in names), what="cy's four submissions", run=ex.run)
    kinds = [of_kind(ex.course, "published", n)[0]["kind"] for n in names]
    assert kinds == ["feedback"] * 3 + ["limit"]
    assert of_kind(ex.course, "published", names[0])[0]["show"] == "full"      # what the pages told the student
    assert len([e for e in of_kind(ex.course, "graded") if e["student"] == "cy"]) == 3
    pages = ex.fetch_feedback("cy")
    limited = [p for p in pages.values() if "not checked" in p["ex1_attention"]]
    assert len(limited) == 1 and "Your next check is possible after" in limited[0]["ex1_attention"]
    assert "Score:" not in limited[0]["ex1_attention"]


def test_hostile_inbound_entries_give_notes_not_pages(ex):
    bob = next(n for n in os.listdir(ex.inbound) if n.startswith("bob+"))
    bob_pages = {p.name: p.read_bytes() for p in ex.feedback.glob("*.html")}
    stamp = "2026-12-01 10:00:00.000000 UTC"
    os.mkfifo(ex.inbound / f"fifo+{A}+{stamp}+x")
    os.symlink(ex.inbound / bob, ex.inbound / f"linker+{A}+{stamp}+x")
    (ex.inbound / f"filer+{A}+{stamp}+x").write_text("not a folder")
    (ex.inbound / "no-plus-signs").mkdir(mode=0o777)
    build = ex.tmp / "hostile"
    build.mkdir()
    for student, secret in (("mallory", "shared"), ("nosecret", None), ("badsecret", "zz\n"), ("linksecret", "link")):
        folder = build / f"{student}+{A}+{stamp}+x"
        shutil.copytree(ex.inbound / bob, folder)
        if secret != "shared":                                          # mallory keeps bob's secret
            (folder / "submission_secret.txt").unlink()
        if secret == "link":
            os.symlink(ex.inbound / bob / "submission_secret.txt", folder / "submission_secret.txt")
        elif secret and secret != "shared":
            (folder / "submission_secret.txt").write_text(secret)
        folder.chmod(0o777)
        folder.rename(ex.inbound / folder.name)                         # whole, as nbgrader leaves it
    hostile = [n for n in os.listdir(ex.inbound) if n.startswith(("fifo+", "linker+", "filer+", "no-plus",
                                                                   "mallory+", "nosecret+", "badsecret+",
                                                                   "linksecret+"))]
    assert len(hostile) == 8
    wait_for(lambda: all(done(ex.course, n) for n in hostile), what="notes on the hostile entries", run=ex.run)
    for name in hostile:
        assert of_kind(ex.course, "note", name) and not of_kind(ex.course, "published", name), name
        assert not of_kind(ex.course, "started", name), name
    notes = {e["entry"].split("+")[0]: e["note"] for e in of_kind(ex.course, "note")}
    assert "FIFO" in notes["fifo"] and "link" in notes["linker"] and "same submission_secret.txt" in notes["mallory"]
    assert "no submission_secret.txt" in notes["nosecret"] and "not hex" in notes["badsecret"]
    assert "link" in notes["linksecret"]
    assert {p.name: p.read_bytes() for p in ex.feedback.glob("*.html")} == bob_pages        # nobody's page changed
    assert ex.run.launcher.poll() is None                                                   # and the service runs on


def test_a_second_watch_is_refused_with_the_holder(ex):
    second = TreeRun(watch_command(ex.course))
    status, output = second.end(within=60)
    assert status == 1 and f"another watch serving feedback on submit (pid {ex.run.pid}" in output, output


def test_kill_9_mid_stream_and_a_restart_lose_and_repeat_nothing(ex):
    names = [submit_like_nbgrader(ex.course, ex.tmp, f"s{i}", "no-scaling" if i % 2 else "correct-1")
             for i in range(8)]
    wait_for(lambda: sum(done(ex.course, n) for n in names) >= 2, what="two of eight", run=ex.run)
    ex.run.signal(signal.SIGKILL)
    status, _ = ex.run.end(within=30)                        # every process of the killed service is gone
    assert status == -signal.SIGKILL
    assert sum(done(ex.course, n) for n in names) < 8, "the service finished before it was killed"
    ex.start("--poll", "0.2")                                # the restart also proves the polling fallback
    wait_for(lambda: all(done(ex.course, n) for n in names), what="all eight after the restart", run=ex.run)
    for name in names:
        assert len(of_kind(ex.course, "published", name)) == 1, name
        assert len(of_kind(ex.course, "graded", name)) == 1, name
    entries = [e["entry"] for e in events(ex.course) if e["event"] == "published"]
    assert len(entries) == len(set(entries))                 # no submission ever got a second feedback
    pages = ex.fetch_feedback("s1")
    assert "no-scaling" in next(iter(pages.values()))["ex1_attention"]


def test_sigterm_ends_the_service_and_everything_it_started(ex):
    ex.run.wait_until(lambda: len(ex.run.processes()) > 1, timeout=60)       # its fork server is up
    ex.run.signal(signal.SIGTERM)
    status, output = ex.run.end(within=30)
    assert status == 143 and "stopped by SIGTERM" in output, output
    assert (ex.course / "gradebook.db").read_bytes() == ex.gradebook          # never written
    run = ex.start()                                                          # and Ctrl-C, to the whole group
    run.wait_until(lambda: len(run.processes()) > 1, timeout=60)
    run.signal(signal.SIGINT, group=True)
    status, output = run.end(within=30)
    assert status == 130 and "stopped by SIGINT" in output, output
    written = {p.relative_to(ex.tmp) for p in ex.tmp.rglob("*")
               if p.is_file() and not p.is_symlink() and p.stat().st_mtime > ex.started}
    allowed = ("build", "cache", "home", "hostile", "exchange/attention-course/inbound",      # students and tests
               "exchange/attention-course/feedback", "course/watch", "course/.nbgrader.log")  # the service
    assert [str(w) for w in written if not str(w).startswith(allowed)] == []


def test_the_pages_say_what_grade_says(ex):
    """After the deadline the instructor collects and grades as usual: each student's last pages before
    it are grade's pages for the same submission, with the pre-deadline banner."""
    from autograder.run.batch import grade_batch
    from batch_helpers import gradebook_in
    for name in os.listdir(ex.inbound):                   # the instructor clears what the notes named
        if "10:00:00.000000" in name or name == "no-plus-signs":
            path = ex.inbound / name
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    collect = run_nbgrader(["collect", A, "--log-level=INFO"], ex.course, "collect")
    assert "FeedbackOnSubmit" not in collect.stdout + collect.stderr     # nbgrader reads the config unbothered
    out = ex.tmp / "grading"
    result = grade_batch(course=ex.course, workers=1, progress=False, out=out, gradebook_url=gradebook_in(out),
                         create_gradebook=True, students=["bob", "s1", "s2"])
    assert {r.student_id for r in result.records} == {"bob", "s1", "s2"}
    for student in ("bob", "s1", "s2"):
        mine = _latest_pages(ex, student)
        for notebook in NOTEBOOKS:
            graded = (ex.course / "feedback" / student / A / f"{notebook}.html").read_text()
            ours = re.sub(r'<p class="presubmit">.*?</p>\n', "", mine[notebook], count=1)
            assert ours == graded, (student, notebook)
    report = (out / "report.html").read_text()
    section = report[report.index("<h2>Before the deadline</h2>"):]
    assert re.search(r"<td>cy</td><td>3</td><td>1</td>", section)             # 3 checks, 1 over the limit
    assert re.search(r"<td>no-scaling</td><td>\d+</td><td>1</td><td>cy</td>", section), section
