"""``python -m autograder lti sync`` against a real LTI 1.3 platform on 127.0.0.1 (lti1p3platform, served by
``lti_platform``): the roster by NRPS, one line item per assignment, the scores read back from the
platform, re-runs, a submission awaiting review, a score a person changed in the LMS, an expired token, a
missing scope, a refused score and a refused key. One platform for the module; each test a new course in it.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from batch_helpers import make_class
from gradebook_helpers import ASSIGNMENT, FULL, add_students, fill_gradebook, set_grade
from lti_platform import INSTRUCTOR, LEARNER, Platform
from autograder.gradebook.nbgrader_api import nbgrader_api
from autograder.lti.client import SCOPE_LINEITEM, SCOPE_NRPS, SCOPE_RESULT, SCOPE_SCORE
from autograder.lti.report import summary_lines
from autograder.lti.session import LtiError
from autograder.lti.sync import TAG, sync_grades

pytestmark = pytest.mark.filterwarnings("ignore:.*not in session")      # nbgrader's own add_submission


@pytest.fixture(scope="module")
def platform():
    served = Platform().start()
    yield served
    served.close()


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The course, and a gradebook holding its assignment (copied by each test: recording it takes seconds)."""
    course = make_class(tmp_path_factory.mktemp("lti"), students=[])
    fill_gradebook(f"sqlite:///{course / 'template.db'}", course, {})
    return course


def member(student: str, **fields) -> dict:
    return {"user_id": f"u-{student}", "name": student.title(), "email": f"{student}@example.edu",
            "lis_person_sourcedid": f"S-{student}", "ext_user_username": student, "roles": [LEARNER],
            "status": "Active", **fields}


class Lms:
    """One test's course: its gradebook, its registration file, its output folder, the platform."""

    def __init__(self, platform, course, tmp_path, earned, roster=()):
        platform.reset()
        self.platform, self.course, self.out = platform, course, tmp_path / "out"
        shutil.copy(course / "template.db", tmp_path / "gradebook.db")
        self.url = f"sqlite:///{tmp_path / 'gradebook.db'}"
        add_students(self.url, earned, roster=roster, emails={s: f"{s}@example.edu" for s in earned})
        self.config = platform.write_config(tmp_path / "instructor")
        platform.store.members = [member(s) for s in [*earned, *roster]] + [
            {"user_id": "u-teacher", "name": "Teacher", "roles": [INSTRUCTOR]}]

    def sync(self, **options):
        return sync_grades(course=self.course, config=self.config, gradebook_url=self.url, out=self.out, **options)

    def cli(self, *extra, timeout=120):
        return subprocess.Popen([sys.executable, "-m", "autograder", "lti", "sync", "--course", str(self.course),
                                 "--config", str(self.config), "--gradebook", self.url, "--out", str(self.out),
                                 *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def run(self, *extra):
        proc = self.cli(*extra)
        out, err = proc.communicate(timeout=120)
        return proc.returncode, out, err


def flag_for_review(url: str, student: str, grade_id: str = "ex2_causal") -> None:
    """A cell of ``student``'s that awaits a person in formgrader (the grader flagged it for review)."""
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        for notebook in gb.find_submission(ASSIGNMENT, student).notebooks:
            for grade in notebook.grades:
                if grade.name == grade_id:
                    grade.needs_manual_grade = True
        gb.db.commit()


CLASS = {"ada": {}, "bob": {"ex2_causal": 2.0}, "cy": {"ex4_cross": 1.0}}


def test_the_roster_line_item_and_scores_read_back(platform, course, tmp_path):
    """ada full marks, bob with a person's manual score, cy late, eve on the roster without a submission, dan
    awaiting review: one line item (the assignment, out of 28), each total as the LMS's result, eve's 0 as
    Initialized, dan PendingManual with no score; every score with its timestamp and progress."""
    lms = Lms(platform, course, tmp_path, {**CLASS, "dan": {}}, roster=["eve"])
    set_grade(lms.url, "bob", "ex2_causal", manual=5.5)
    set_grade(lms.url, "cy", "ex4_cross", manual=None, penalty=6.0)
    flag_for_review(lms.url, "dan")
    result = lms.sync()
    [item] = platform.store.items.values()
    assert (item["label"], item["resourceId"], item["tag"], item["scoreMaximum"]) == (ASSIGNMENT, ASSIGNMENT, TAG, 28.0)
    assert result.lineitem == item["id"] and result.created
    assert platform.results() == {"u-ada": 28.0, "u-bob": 27.5, "u-cy": 18.0, "u-eve": 0.0, "u-dan": None}
    posts = {p["userId"]: p for p in platform.posts()}
    assert {u: (p["activityProgress"], p["gradingProgress"]) for u, p in posts.items()} == {
        "u-ada": ("Completed", "FullyGraded"), "u-bob": ("Completed", "FullyGraded"),
        "u-cy": ("Completed", "FullyGraded"), "u-eve": ("Initialized", "FullyGraded"),
        "u-dan": ("Submitted", "PendingManual")}
    assert "scoreGiven" not in posts["u-dan"] and all(p["timestamp"].endswith("+00:00") for p in posts.values())
    assert result.report.read_text().splitlines()[0].startswith(f"{ASSIGNMENT}: LMS column '{item['id']}' (new); "
                                                                 "posted 4 scores, 1 pending review")


def test_a_rerun_posts_nothing_and_a_regrade_replaces_one_score_in_the_same_column(platform, course, tmp_path):
    lms = Lms(platform, course, tmp_path, CLASS)
    lms.sync()
    again = lms.sync()
    assert len(platform.store.items) == 1 and len(platform.posts()) == 3
    assert [d.kind for d in again.decisions] == ["unchanged"] * 3 and not again.created
    set_grade(lms.url, "bob", "ex2_causal", manual=4.0)       # a person regrades bob
    third = lms.sync()
    assert [(d.total.student, d.kind) for d in third.decisions if d.kind != "unchanged"] == [("bob", "post")]
    assert len(platform.store.items) == 1 and len(platform.posts("u-bob")) == 2
    assert platform.results()["u-bob"] == 26.0
    stamps = [p["timestamp"] for p in platform.posts("u-bob")]
    assert stamps == sorted(stamps) and stamps[0] != stamps[1]        # the later score replaces the earlier


def test_a_submission_awaiting_review_is_pending_until_a_person_grades_it(platform, course, tmp_path):
    lms = Lms(platform, course, tmp_path, CLASS)
    lms.sync()
    flag_for_review(lms.url, "ada")                          # a regrade flags ada: her 28 is no longer final
    lms.sync()
    assert platform.posts("u-ada")[-1]["gradingProgress"] == "PendingManual"
    assert platform.results()["u-ada"] is None                 # the LMS no longer shows a final score
    set_grade(lms.url, "ada", "ex2_causal", manual=3.0)      # the person's review
    result = lms.sync()
    assert [d.total.student for d in result.decisions if d.kind == "post"] == ["ada"]
    assert platform.posts("u-ada")[-1]["gradingProgress"] == "FullyGraded" and platform.results()["u-ada"] == 25.0


def test_a_score_changed_in_the_lms_is_named_and_kept_unless_forced(platform, course, tmp_path):
    lms = Lms(platform, course, tmp_path, CLASS)
    lms.sync()
    platform.set_result("u-ada", 20.0)                        # a person in the LMS's gradebook
    set_grade(lms.url, "ada", "ex2_causal", manual=1.0)
    assert "changed in the LMS since the last sync, kept (old -> new; --force overwrites) (1): 'ada' (LMS 'Ada') " \
           "28 -> 20" in summary_lines(lms.sync())
    assert platform.results()["u-ada"] == 20.0 and len(platform.posts("u-ada")) == 1
    lms.sync(force=True)
    assert platform.results()["u-ada"] == 23.0 and len(platform.posts("u-ada")) == 2


def regrade(url: str, grade_id: str, delta: float) -> None:
    """Every submission's ``grade_id`` changed by ``delta`` (a fixed hidden test, say), in one session."""
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        for submission in gb.assignment_submissions(ASSIGNMENT):
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.name == grade_id:
                        grade.auto_score += delta
        gb.db.commit()


@pytest.mark.timeout(300)
def test_a_sync_killed_midway_then_resumed_posts_each_score_once(platform, course, tmp_path):
    """25 students synced, then regraded; the platform holds the 7th score request of the next sync until
    that sync is killed (SIGKILL), then applies it, as an LMS that got the request from a tool that died
    before hearing back. The resumed sync finds the score the dead one sent (its journal's pending group)
    in the LMS's results, takes it as its own (not as a person's change) and sends the rest: every
    student's new score reaches the LMS exactly once."""
    students = {f"s{i:02d}": {"ex1_attention": float(i % 5)} for i in range(25)}
    lms = Lms(platform, course, tmp_path, students)
    lms.sync()
    regrade(lms.url, "ex1_attention", 0.5)
    platform.store.hold_at = 25 + 7
    proc = lms.cli()
    assert platform.store.held.wait(120), proc.communicate()
    proc.kill()
    proc.wait(30)
    platform.store.release.set()
    assert platform.store.applied.wait(30)
    [journal] = (lms.out / "lti").glob("*-????????????.json")
    assert json.loads(journal.read_text())["pending"], "the killed sync left its group pending"
    code, out, err = lms.run()
    assert code == 0, err
    assert "posted 18 scores" in out and "1 score sent by the sync that stopped midway was found in the LMS" in out
    assert "changed in the LMS" not in out
    assert sorted(s["userId"] for s in platform.posts()) == sorted(2 * [f"u-{s}" for s in students])
    assert platform.results() == {f"u-{s}": 28.0 - FULL["ex1_attention"] + i % 5 + 0.5
                                  for i, s in enumerate(students)}
    assert len(platform.store.items) == 1 and not json.loads(journal.read_text())["pending"]


def test_an_expired_token_is_renewed_mid_sync(platform, course, tmp_path):
    """Tokens live 3 s (the answer still says an hour); the third score request waits 4 s, so its token has
    expired when the platform checks it: 401, a new token, the score posted once."""
    lms = Lms(platform, course, tmp_path, {**CLASS, "dan": {}, "eve": {}})
    platform.registration.lifetime = 3
    platform.store.delay = {3: 4.0}
    lms.sync()
    assert platform.store.tokens >= 3                        # roster, grades, and the grades' renewal
    assert sorted(p["userId"] for p in platform.posts()) == ["u-ada", "u-bob", "u-cy", "u-dan", "u-eve"]


def one_line_error(call) -> str:
    with pytest.raises(LtiError) as caught:
        call()
    assert "\n" not in str(caught.value)
    return str(caught.value)


@pytest.mark.parametrize("missing", [SCOPE_SCORE, SCOPE_NRPS])
def test_a_missing_scope_stops_with_one_line(platform, course, tmp_path, missing):
    """The registration lacks a service: the token the LMS grants lacks its scope. (lti1p3platform's
    handlers accept a token holding any of a service's scopes, so a score would go through on a lineitem
    token alone: the tool itself must stop.)"""
    lms = Lms(platform, course, tmp_path, CLASS)
    platform.store.granted = {SCOPE_LINEITEM, SCOPE_RESULT, SCOPE_SCORE, SCOPE_NRPS} - {missing}
    assert one_line_error(lms.sync).startswith(f"the LMS did not grant the tool {missing}")
    assert not platform.posts() and not platform.store.items


def test_a_refused_score_stops_with_one_line_and_a_rerun_posts_the_rest_once(platform, course, tmp_path):
    lms = Lms(platform, course, tmp_path, CLASS)
    platform.store.refuse = {"u-bob"}
    code, out, err = lms.run()
    assert code == 1 and len(err.strip().splitlines()) == 1 and not out
    assert err.startswith("error: the LMS refused http://127.0.0.1:") and "(403: " in err
    assert [p["userId"] for p in platform.posts()] == ["u-ada"]
    platform.store.refuse = set()
    lms.sync()
    assert sorted(p["userId"] for p in platform.posts()) == ["u-ada", "u-bob", "u-cy"]


def test_a_key_the_lms_does_not_know_is_refused_in_one_line(platform, course, tmp_path):
    from lti_platform import private_pem
    lms = Lms(platform, course, tmp_path, CLASS)
    (tmp_path / "instructor" / "lti-tool.pem").write_text(private_pem())
    assert one_line_error(lms.sync).startswith("the LMS refused the tool a token (401: ")


def test_a_deleted_column_is_said_and_two_columns_are_never_guessed_between(platform, course, tmp_path):
    lms = Lms(platform, course, tmp_path, CLASS)
    lms.sync()
    platform.store.items.clear()                               # a person deleted the column in the LMS
    with pytest.raises(LtiError, match="that the last sync posted ch04_attention's scores to is gone"):
        lms.sync()
    lms.sync(force=True)
    assert len(platform.store.items) == 1 and len(platform.posts()) == 6
    twin = dict(next(iter(platform.store.items.values())), id=platform.url("/api/lti/courses/1/lineitems/99"))
    platform.store.items["99"] = twin
    (tmp_path / "out2").mkdir()
    with pytest.raises(LtiError, match="the LMS has 2 columns for ch04_attention made by this tool"):
        sync_grades(course=lms.course, config=lms.config, gradebook_url=lms.url, out=tmp_path / "out2")


def test_a_dry_run_posts_nothing_and_a_second_sync_at_once_is_refused(platform, course, tmp_path):
    import fcntl
    import os

    from autograder.lti.journal import journal_path
    from lti_platform import CLIENT_ID, ISSUER
    lms = Lms(platform, course, tmp_path, CLASS)
    dry = lms.sync(dry_run=True)
    assert [d.kind for d in dry.decisions] == ["post"] * 3 and dry.lineitem == "(a new column)"
    assert not platform.store.items and not platform.posts() and not list((lms.out / "lti").glob("*.json"))
    lock = journal_path(lms.out, ASSIGNMENT, ISSUER, CLIENT_ID, platform.url("/api/lti/courses/1/lineitems"))
    fd = os.open(lock.with_suffix(".lock"), os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)                         # a sync of the same journal, still running
        assert one_line_error(lms.sync).startswith("another sync of this assignment to this LMS course is running")
    finally:
        os.close(fd)
    assert not platform.posts()


def test_check_reads_the_registration_and_prints_the_tool_s_public_key(platform, course, tmp_path):
    lms = Lms(platform, course, tmp_path, CLASS)
    proc = subprocess.run([sys.executable, "-m", "autograder", "lti", "check", "--course", str(course),
                           "--config", str(lms.config)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1] == "roster: 4 members, 3 learners (matched by login)"
    jwk = json.loads(lines[-1])
    assert jwk["kty"] == "RSA" and "d" not in jwk and jwk["kid"]
    assert not platform.posts() and not platform.store.items


HOSTILE = ['=HYPERLINK("http://evil.example","click")', "\u202eevil\u202c.exe", "+SUM(A1:A9)", "-2+3", "@cmd",
           "two\nlines", "\x1b[2Jcleared", "zero\u200bwidth"]


@pytest.mark.timeout(300)
def test_a_hostile_roster_of_ten_thousand_members(platform, course, tmp_path):
    """10,000 members (20 pages), names that are formulas, bidi overrides, escapes, newlines; two learners
    sharing one login; a student whose login is Cyrillic look-alike of a learner's. The three real students
    are posted; the shared login and the look-alike are listed, never guessed; every line written or printed
    shows the names inert (quoted, hidden characters as escapes) and the journal is ASCII JSON."""
    lms = Lms(platform, course, tmp_path, {"ada": {}, "bob": {}, "dup": {}, "\u0430nn": {}})
    crowd = [member(f"x{i:05d}", name=HOSTILE[i % len(HOSTILE)] + f" {i}", email=HOSTILE[i % 3] + "@x")
             for i in range(9994)]
    platform.store.members = [member("ada", name=HOSTILE[0]), member("bob", name=HOSTILE[1]),
                              member("dup", user_id="u-dup1"), member("dup", user_id="u-dup2"), member("ann"),
                              *crowd, {"user_id": "u-teacher", "name": "Teacher", "roles": [INSTRUCTOR]}]
    code, out, err = lms.run()
    assert code == 0, err
    assert sorted(platform.results()) == ["u-ada", "u-bob"]
    assert "ambiguous (no score sent) (1): 'dup' (2 LMS learners share the login)" in out
    assert "not matched to an LMS learner (no score sent) (1): '\u0430nn [\\u0430nn]' (no LMS learner has the login)" \
           in out
    assert "active LMS learners with no student in the gradebook (9997): " in out and "and 9977 more" in out
    [report] = (lms.out / "lti").glob("*-report.txt")
    [journal] = (lms.out / "lti").glob("*-????????????.json")
    text = report.read_text()
    assert len(text.splitlines()) > 9995 and journal.read_bytes().isascii()
    for written in (out, text):
        assert not any(ch in written for ch in "\u202e\u202c\u200b\x1b")
        assert "'=HYPERLINK(" in written and "'\\u202eevil\\u202c.exe" in written
        assert all(line.startswith(("  '", "  ")) or not line.startswith(("=", "+", "-", "@"))
                   for line in written.splitlines())
    assert "'two lines" not in text and "'two\\x0alines" in text        # a newline in a name is an escape
