"""Feedback on submit, piece by piece: settings, limits, the journal, inbound as hostile input, the
gradebook read without writing, publishing, and the service's rules with a stand-in grader."""
import json
import os
import time
from pathlib import Path
from datetime import datetime, timedelta, timezone

import pytest

from autograder.course.settings import load_course
from autograder.course.view import read_course
from autograder.run.job import Graded, failed, failed_record, folder_digest
from autograder.watch.config import DEFAULT_ROOT, watch_settings
from autograder.watch.duedate import DueDates
from autograder.watch.inbound import Ready, Waiting, examine, parse_name
from autograder.journal.events import parse_event
from autograder.journal.log import Journal, read_events
from autograder.watch.limits import Limit, next_check, parse_limit
from autograder.watch.pages import MARK
from autograder.watch.publish import page_file, publish
from autograder.watch.service import Service
from watch_helpers import A, inbound_course as _course, published as done_in, submit_like_nbgrader


def _gradebook(url):
    from nbgrader.api import Gradebook

    from autograder.gradebook.nbgrader_api import stamp_new_sqlite
    stamp_new_sqlite(url)                                               # no `alembic heads` process
    return Gradebook(url, "attention-course")


# --- settings and limits ------------------------------------------------------------------------
def test_settings_default_to_full_five_a_day_and_nbgraders_root(tmp_path):
    course = _course(tmp_path)
    s = watch_settings(load_course(course), A)
    assert (s.show, s.limit, s.after_due_date) == ("full", Limit(5, "day"), False)
    assert s.inbound == tmp_path / "exchange" / "attention-course" / "inbound"
    (course / "nbgrader_config.py").write_text('c.CourseDirectory.course_id = "x"\n')
    assert watch_settings(load_course(course), A).root == __import__("pathlib").Path(DEFAULT_ROOT)


@pytest.mark.parametrize("line, words", [
    ('c.FeedbackOnSubmit.show = "everything"', "use one of 'full', 'diagnosis', 'visible'"),
    ('c.FeedbackOnSubmit.limt = "5/day"', "limt in"),
    ('c.FeedbackOnSubmit.limit = "5/week"', "such as \"5/day\""),
    ('c.FeedbackOnSubmit.limit = "0/day"', "at least 1"),
    ('c.FeedbackOnSubmit.after_due_date = "yes"', "use True or False"),
    ('c.FeedbackOnSubmit.show = "fu" + "ll"', "computed, not a plain value"),
    ('c.Exchange.root = 42', "give the exchange folder as a string"),
])
def test_a_wrong_setting_is_named_with_what_to_write(tmp_path, line, words):
    course = _course(tmp_path, line + "\n")
    with pytest.raises(ValueError, match=None) as err:
        watch_settings(load_course(course), A)
    assert words in str(err.value)


def test_a_course_without_course_id_is_refused(tmp_path):
    course = _course(tmp_path)
    text = (course / "nbgrader_config.py").read_text().replace("c.CourseDirectory.course_id", "# was")
    (course / "nbgrader_config.py").write_text(text)
    with pytest.raises(ValueError, match="sets no c.CourseDirectory.course_id"):
        watch_settings(load_course(course), A)


def test_the_limit_window_slides():
    limit = parse_limit(" 2 / hour ")
    assert limit == Limit(2, "hour") and str(limit) == "2 per hour"
    assert next_check([], limit, 1000.0) is None
    assert next_check([100.0], limit, 1000.0) is None
    assert next_check([100.0, 200.0], limit, 1000.0) == 100.0 + 3600
    assert next_check([100.0, 200.0, 300.0], limit, 1000.0) == 200.0 + 3600
    assert next_check([100.0, 200.0], limit, 3700.0) is None           # the first left the window


# --- the journal -------------------------------------------------------------------------------
def test_the_journal_skips_a_line_cut_by_a_crash_and_starts_the_next_anew(tmp_path):
    odd = "stu\udcff+ch04\n+x"                                         # undecodable byte and newline in a name
    journal = Journal(tmp_path)
    journal.append(parse_event({"event": "received", "entry": odd, "student": "stu", "secret": "d1"}))
    journal.append(parse_event({"event": "published", "entry": odd, "kind": "feedback"}))
    journal.close()
    with open(tmp_path / "journal.jsonl", "ab") as f:
        f.write(b'{"event":"received","entry":"cut')                  # kill -9 mid-write
    again = Journal(tmp_path)
    assert again.state.entries[odd].done and again.state.secrets == {"d1": odd}
    again.append(parse_event({"event": "note", "entry": "next", "note": "n"}))
    again.close()
    assert [e.entry for e in read_events(tmp_path / "journal.jsonl")] == [odd, odd, "next"]


# --- inbound as hostile input --------------------------------------------------------------------
def test_names_are_split_as_nbgrader_collect_splits_them():
    got = parse_name(f"a+b+{A}+2026-12-01 09:00:00.000000 UTC+rnd")
    assert (got.student, got.assignment) == ("a+b", A)               # collect allows + in user names
    assert parse_name(f"ada+{A}+2026-12-01 09:00:00 UTC").student == "ada"
    for bad in ("no-plus", "a+b", f"+{A}+t", f"*+{A}+t", f".hidden+{A}+t"):
        assert isinstance(parse_name(bad), str), bad


def _examine(folder, name, settled=False):
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return examine(fd, name, settled)
    finally:
        os.close(fd)


def test_inbound_entries_that_are_not_whole_submissions(tmp_path):
    inbound = tmp_path / "inbound"
    (inbound / "sub").mkdir(parents=True)
    (inbound / "sub" / "ex1_attention.ipynb").write_text("{}")
    os.mkfifo(inbound / "fifo")
    os.symlink(inbound / "sub", inbound / "link")
    (inbound / "file").write_text("x")
    assert "FIFO" in _examine(inbound, "fifo").note and "link" in _examine(inbound, "link").note
    assert "a file" in _examine(inbound, "file").note
    assert isinstance(_examine(inbound, "sub"), Waiting)                # nbgrader may still be writing it
    assert "no submission_secret.txt" in _examine(inbound, "sub", settled=True).note
    (inbound / "sub").chmod(0o777)                                      # nbgrader's last step
    assert "no submission_secret.txt" in _examine(inbound, "sub").note
    for content, words in ((b"f" * 600, "not hex"), (b"ab\n", "not hex")):
        (inbound / "sub" / "submission_secret.txt").write_bytes(content)
        assert words in _examine(inbound, "sub").note
    (inbound / "sub" / "submission_secret.txt").unlink()
    os.mkfifo(inbound / "sub" / "submission_secret.txt")
    assert "FIFO" in _examine(inbound, "sub").note                      # never opened for reading
    (inbound / "sub" / "submission_secret.txt").unlink()
    (inbound / "sub" / "submission_secret.txt").write_text("ab" * 64)
    os.symlink(inbound / "sub" / "ex1_attention.ipynb", inbound / "sub" / "linked.ipynb")
    ready = _examine(inbound, "sub")
    assert isinstance(ready, Ready) and ready.secret == "ab" * 64 and ready.notebooks == ("ex1_attention",)


def test_a_folder_made_in_a_classmates_name_by_another_account_is_refused(tmp_path, monkeypatch):
    """Where students have accounts, a submission folder belongs to whoever ran nbgrader's submit: one owned
    by another account bears a classmate's name to use up their checks, and gets a note, never a page."""
    from autograder.watch import inbound as module
    inbound = tmp_path / "inbound"
    for name in ("alice+ch04_attention+t", "bob+ch04_attention+t", "nobody+ch04_attention+t"):
        (inbound / name).mkdir(parents=True)
        (inbound / name / "ex1_attention.ipynb").write_text("{}")
        (inbound / name / "submission_secret.txt").write_text("ab" * 64)
        os.chown(inbound / name, 60001, 60001)                           # made by eve's account
        (inbound / name).chmod(0o777)
    accounts = {"alice": 60002, "bob": 60001}                           # nobody has no account here
    monkeypatch.setattr(module, "account_uid", accounts.get)
    note = _examine(inbound, "alice+ch04_attention+t").note
    assert "'uid 60001'" in note and "not to 'alice'" in note and "does not count" in note
    assert isinstance(_examine(inbound, "bob+ch04_attention+t"), Ready)          # bob's own folder
    assert isinstance(_examine(inbound, "nobody+ch04_attention+t"), Ready)       # cannot be told: taken
    os.chown(inbound / "alice+ch04_attention+t", os.geteuid(), -1)      # the instructor copied it by hand
    assert isinstance(_examine(inbound, "alice+ch04_attention+t"), Ready)


# --- publishing --------------------------------------------------------------------------------
def test_pages_are_named_by_nbgraders_hash_and_readable_by_students(tmp_path):
    from nbgrader.utils import notebook_hash
    name = page_file("ab" * 64, "ex1_attention")
    assert name == notebook_hash(secret="ab" * 64, notebook_id="ex1_attention") + ".html"
    assert publish(tmp_path, {name: '<p class="presubmit">é</p>'}, MARK) == []
    assert os.listdir(tmp_path) == [name] and (tmp_path / name).stat().st_mode & 0o777 == 0o644
    assert publish(tmp_path, {name: '<p class="presubmit">new</p>'}, MARK) == []       # ours: replaced
    assert "new" in (tmp_path / name).read_text()


def test_a_page_release_feedback_put_there_is_never_replaced(tmp_path):
    course = _course(tmp_path)
    name = submit_like_nbgrader(course, tmp_path, "ada")
    secret = (_inbound(tmp_path) / name / "submission_secret.txt").read_text()
    official = tmp_path / "exchange/attention-course/feedback" / page_file(secret, "ex1_attention")
    official.write_text("<html>graded feedback from release_feedback</html>")
    service, journal, said = _service(course, tmp_path)
    service.step()
    assert official.read_text() == "<html>graded feedback from release_feedback</html>"
    assert journal.state.entries[name].published.kept == 1 and any("1 kept" in line for line in said)


# --- the gradebook, read only ------------------------------------------------------------------
def test_due_dates_come_from_the_gradebook_with_extensions_and_nothing_is_written(tmp_path):
    db = tmp_path / "gradebook.db"
    assert DueDates(f"sqlite:///{db}").due(A, "ada") is None and not db.exists()     # not created
    due = datetime(2026, 12, 1, 17, 0)
    with _gradebook(f"sqlite:///{db}") as gb:
        gb.add_assignment(A, duedate=due)
        gb.add_student("ada")
        gb.add_student("bob")
        gb.add_submission(A, "ada")
        gb.grant_extension(A, "ada", days=2)
    before = db.read_bytes()
    dates = DueDates(f"sqlite:///{db}")
    assert dates.due(A, "ada") == due + timedelta(days=2) and dates.due(A, "bob") == due
    assert dates.due(A, "nobody") == due and dates.due("other", "ada") is None
    dates.close()
    assert db.read_bytes() == before


# --- the service's rules, with a stand-in grader --------------------------------------------------
class StandIn:
    """Grades nothing: records what it was asked and answers a record for review."""

    def __init__(self, course):
        self.course, self.asked, self.done = course, [], []
        self.busy = 0

    serial = True

    def submit(self, job):
        self.asked.append(job.student)
        # what it graded is the folder as it is now, as a real grader's record says (run.job.failed)
        self.done.append((job, Graded(failed(job, "stand-in"))))

    def finished(self, wait=False):
        done, self.done = self.done, []
        return done


def _service(course, tmp_path):
    settings = watch_settings(load_course(course), A)
    (settings.state / "records").mkdir(parents=True, exist_ok=True)
    said = []
    journal = Journal(settings.state)
    service = Service(settings, journal, StandIn(course), said.append, said.append)
    return service, journal, said


def test_a_submission_that_stopped_the_service_twice_is_not_graded_again(tmp_path):
    course = _course(tmp_path)
    name = submit_like_nbgrader(course, tmp_path, "ada")
    service, journal, said = _service(course, tmp_path)
    secret = (tmp_path / "exchange/attention-course/inbound" / name / "submission_secret.txt").read_bytes()
    import hashlib
    journal.append(parse_event({"event": "received", "entry": name, "student": "ada", "secret": hashlib.sha256(secret).hexdigest(),
                    "received": time.time()}))
    journal.append(parse_event({"event": "started", "entry": name}))
    journal.append(parse_event({"event": "started", "entry": name}))
    service.step()
    assert service.grader.asked == [] and "stopped the service twice" in journal.state.entries[name].note


def test_after_the_due_date_a_page_says_so_and_nothing_is_graded(tmp_path):
    course = _course(tmp_path)
    with _gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.add_assignment(A, duedate=datetime(2020, 1, 1))
    name = submit_like_nbgrader(course, tmp_path, "ada")
    service, journal, said = _service(course, tmp_path)
    service.step()
    assert service.grader.asked == [] and journal.state.entries[name].published.kind == "closed"
    page = next((tmp_path / "exchange/attention-course/feedback").glob("*.html")).read_text()
    assert "after the due date (2020-01-01 00:00:00 UTC)" in page and "Score" not in page


def test_after_the_due_date_feedback_goes_on_when_the_instructor_says_so(tmp_path):
    course = _course(tmp_path, "c.FeedbackOnSubmit.after_due_date = True\n")
    with _gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.add_assignment(A, duedate=datetime(2020, 1, 1))
    name = submit_like_nbgrader(course, tmp_path, "ada")
    service, journal, said = _service(course, tmp_path)
    service.step()
    assert service.grader.asked == ["ada"] and journal.state.entries[name].published.kind == "feedback"
    saved = json.loads((course / "watch" / "records" / journal.state.entries[name].graded.record).read_text())
    assert saved["record"]["student_id"] == "ada"
    page = next((tmp_path / "exchange/attention-course/feedback").glob("*.html")).read_text()
    assert "Feedback on a late submission" in page and "after the due date (2020-01-01 00:00:00 UTC)" in page
    assert "Pre-deadline" not in page


def test_a_backlog_graded_at_start_is_not_charged_and_the_limit_page_knows_the_due_date(tmp_path):
    """A watch started late grades what waited for it without charging it to the students' limits (ada's
    first check after the start is still hers); a limit page whose next check would fall after the due
    date says that no check comes then."""
    course = _course(tmp_path, 'c.FeedbackOnSubmit.limit = "1/day"\n')
    _due_soon(course, 3600.0)
    waited = submit_like_nbgrader(course, tmp_path, "ada")
    service, journal, said = _service(course, tmp_path)
    service.step()
    assert journal.state.entries[waited].published.kind == "feedback" and journal.state.checks["ada"] == []
    assert any("received before watch started: not counted against the limit" in line for line in said)
    now = submit_like_nbgrader(course, tmp_path, "ada")
    service.step()
    assert journal.state.entries[now].published.kind == "feedback" and len(journal.state.checks["ada"]) == 1
    over = submit_like_nbgrader(course, tmp_path, "ada")
    service.step()
    assert journal.state.entries[over].published.kind == "limit" and service.grader.asked == ["ada", "ada"]
    secret = (tmp_path / "exchange/attention-course/inbound" / over / "submission_secret.txt").read_text()
    page = (tmp_path / "exchange/attention-course/feedback" / page_file(secret, "ex1_attention")).read_text()
    assert "which is after the due date" in page and "no check comes then" in page
    assert "Your next check is possible" not in page and any("no check before the due date" in line for line in said)


def test_a_changed_config_is_named_and_the_started_settings_kept(tmp_path):
    course = _course(tmp_path)
    service, journal, said = _service(course, tmp_path)
    service.step()
    assert said == []
    with open(course / "nbgrader_config.py", "a") as f:
        f.write('c.FeedbackOnSubmit.limit = "1/day"\n')
    service.step()
    service.step()
    assert len(said) == 1 and "keeps the settings it started with (show 'full', at most 5 per day" in said[0]
    assert "restart watch" in said[0] and service.s.limit == Limit(5, "day")


def test_a_graded_submission_is_published_from_its_saved_record_not_graded_again(tmp_path):
    course = _course(tmp_path)
    name = submit_like_nbgrader(course, tmp_path, "ada")
    service, journal, said = _service(course, tmp_path)
    service.step()
    feedback = tmp_path / "exchange/attention-course/feedback"
    pages = {p.name: p.read_text() for p in feedback.glob("*.html")}
    lines = (course / "watch" / "journal.jsonl").read_text().splitlines()
    (course / "watch" / "journal.jsonl").write_text("\n".join(lines[:-1]) + "\n")    # killed before "published"
    for page in feedback.glob("*.html"):
        page.unlink()
    service, journal, said = _service(course, tmp_path)
    service.step()
    assert service.grader.asked == [] and journal.state.entries[name].published
    assert sorted(p.name for p in feedback.glob("*.html")) == sorted(pages)


def test_the_reports_section_counts_checks_and_misconceptions_fixed_after_feedback(tmp_path):
    from autograder.outputs.report import report_html
    from autograder.journal.summary import before_deadline
    journal = Journal(tmp_path / "watch")
    checks = {"ada": [["no-scaling"], ["no-scaling", "mask-after-softmax"], []], "bob": [["no-scaling"]]}
    t = 0
    for student, runs in checks.items():
        for i, diagnoses in enumerate(runs):
            entry, t = f"{student}+{A}+{i}", t + 1
            journal.append(parse_event({"event": "received", "entry": entry, "student": student, "assignment": A, "received": t}))
            journal.append(parse_event({"event": "graded", "entry": entry, "diagnoses": diagnoses, "at": t + 0.2}))
            journal.append(parse_event({"event": "published", "entry": entry, "kind": "feedback", "pages": 4, "at": t + 0.3}))
    journal.append(parse_event({"event": "received", "entry": "bob+x", "student": "bob", "assignment": A}))
    journal.append(parse_event({"event": "published", "entry": "bob+x", "kind": "limit"}))
    journal.append(parse_event({"event": "received", "entry": "cy+other", "student": "cy", "assignment": "other"}))
    journal.close()
    got = before_deadline(tmp_path, A)
    assert dict(got.checks) == {"ada": 3, "bob": 1} and dict(got.refused) == {"bob": 1}
    assert got.named == {"no-scaling": {"ada", "bob"}, "mask-after-softmax": {"ada"}}
    assert got.fixed == {"no-scaling": {"ada"}, "mask-after-softmax": {"ada"}}
    assert before_deadline(tmp_path, "never-watched") is None
    record = failed_record("ada", "x", assignment=A)
    html = report_html([record], A, before=got)
    assert "<td>no-scaling</td><td>2</td><td>1</td><td>ada</td>" in html
    assert "Before the deadline" not in report_html([record], A)


def test_a_fix_counts_only_when_it_came_after_the_pages_that_named_it(tmp_path):
    """watch started after cy had submitted twice (no-scaling, then right): both are graded at its start,
    but cy fixed it before any feedback; dee's page was not published (release_feedback's was kept) and
    fay's showed the visible tests only, so neither was told of it; eve's fix came after her page."""
    from autograder.journal.summary import before_deadline
    journal = Journal(tmp_path / "watch")
    runs = {"cy": [(100, 200, 4, ["no-scaling"]), (101, 201, 4, [])],
            "dee": [(100, 200, 0, ["no-scaling"]), (300, 301, 4, [])],
            "eve": [(100, 101, 4, ["no-scaling"]), (150, 151, 4, [])],
            "fay": [(100, 101, 4, ["no-scaling"]), (150, 151, 4, [])]}
    for student, checks in runs.items():
        for i, (came, graded, pages, diagnoses) in enumerate(checks):
            entry = f"{student}+{A}+{i}"
            journal.append(parse_event({"event": "received", "entry": entry, "student": student, "assignment": A,
                            "received": came}))
            journal.append(parse_event({"event": "graded", "entry": entry, "diagnoses": diagnoses, "at": graded}))
            journal.append(parse_event({"event": "published", "entry": entry, "kind": "feedback", "pages": pages,
                            "kept": 4 - pages, "at": graded + 0.1, "show": "visible" if student == "fay" else "full"}))
    journal.close()
    got = before_deadline(tmp_path, A)
    assert got.named == {"no-scaling": {"cy", "eve"}}
    assert got.fixed == {"no-scaling": {"eve"}}
    assert dict(got.checks) == {"cy": 2, "dee": 2, "eve": 2, "fay": 2}


def test_a_stop_signal_during_grading_is_not_held_against_the_submission(tmp_path):
    from autograder.lifecycle import Stop
    course = _course(tmp_path)
    name = submit_like_nbgrader(course, tmp_path, "ada")
    for _ in range(3):                                                  # three SIGTERMs mid-grading
        service, journal, said = _service(course, tmp_path)

        def stopped(*args):
            raise Stop(15)
        service.grader.submit = stopped
        with pytest.raises(Stop):
            service.step()
        journal.close()
    service, journal, said = _service(course, tmp_path)
    service.step()
    assert service.grader.asked == ["ada"] and journal.state.entries[name].published.kind == "feedback"


def test_without_watchfiles_the_service_polls(monkeypatch, tmp_path):
    from autograder.watch.wake import Polling, waker
    monkeypatch.setitem(__import__("sys").modules, "watchfiles", None)        # not installed
    assert isinstance(waker(tmp_path, None), Polling)


def test_when_inotify_fails_the_service_polls_and_still_grades(monkeypatch, tmp_path):
    import watchfiles

    from autograder.watch.service import watch

    def broken(*args, **kwargs):
        raise OSError("inotify watch limit reached")
        yield
    monkeypatch.setattr(watchfiles, "watch", broken)
    course = _course(tmp_path)
    said = []
    watch(course=course, say=said.append, warn=said.append, until=passes(2))
    assert "(inotify)" in said[0] and any("inotify stopped" in line and "polling" in line for line in said)
    assert "settings are read once: restart watch after changing nbgrader_config.py" in said[0]
    name = submit_like_nbgrader(course, tmp_path, "ada")
    said.clear()
    watch(course=course, poll=0.05, say=said.append, warn=said.append, until=lambda: done_in(course, name))
    assert "(polling)" in said[0] and done_in(course, name)


def passes(n):
    """``until`` for watch: true at the n-th pass."""
    count = iter(range(n - 1, -1, -1))
    return lambda: next(count) == 0


def test_an_exchange_without_the_course_stops_watch_with_what_to_do(tmp_path):
    from autograder.watch.service import watch
    course = _course(tmp_path)
    __import__("shutil").rmtree(tmp_path / "exchange")
    with pytest.raises(ValueError, match="run `nbgrader release_assignment` first"):
        watch(course=course, until=passes(1))
    assert not (tmp_path / "exchange").exists()                        # nothing made outside its folders


def test_the_command_line_says_what_is_wrong_in_one_line(tmp_path):
    import subprocess
    import sys
    course = _course(tmp_path, 'c.FeedbackOnSubmit.show = "all"\n')
    proc = subprocess.run([sys.executable, "-m", "autograder", "watch", "--course", str(course)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stderr.startswith("error: c.FeedbackOnSubmit.show is 'all'")
    assert len(proc.stderr.splitlines()) == 1
    proc = subprocess.run([sys.executable, "-m", "autograder", "watch", "--poll", "0"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and "must be from 0.01 to 60 seconds" in proc.stderr


def _inbound(tmp_path):
    return tmp_path / "exchange" / "attention-course" / "inbound"


def test_a_secret_changed_after_arrival_gets_a_note_not_a_page(tmp_path):
    course = _course(tmp_path)
    name = submit_like_nbgrader(course, tmp_path, "ada")
    service, journal, said = _service(course, tmp_path)
    journal.append(parse_event({"event": "received", "entry": name, "student": "ada", "secret": "digest-of-another-secret"}))
    service.step()
    assert service.grader.asked == [] and "changed after it arrived" in journal.state.entries[name].note
    assert not list((tmp_path / "exchange/attention-course/feedback").glob("*.html"))


def test_a_notebook_that_is_not_the_assignments_gets_a_page_saying_so(tmp_path):
    from autograder.watch.inbound import MAX_NOTEBOOKS
    course = _course(tmp_path)
    name = submit_like_nbgrader(course, tmp_path, "ada")
    folder = _inbound(tmp_path) / name
    for i in range(MAX_NOTEBOOKS + 10):
        (folder / f"scratch{i:02d}.ipynb").write_text("{}")
    service, journal, said = _service(course, tmp_path)
    service.step()
    pages = list((tmp_path / "exchange/attention-course/feedback").glob("*.html"))
    assert len(pages) == MAX_NOTEBOOKS                                  # bounded, whatever the folder holds
    secret = (folder / "submission_secret.txt").read_text()
    feedback = tmp_path / "exchange/attention-course/feedback"
    assert "Score:" in (feedback / page_file(secret, "ex1_attention")).read_text()      # its own come first
    extra = (feedback / page_file(secret, "scratch00")).read_text()
    assert "is not one of the assignment's notebooks" in extra


def test_a_page_that_cannot_be_written_is_tried_again_later(tmp_path, monkeypatch):
    from autograder.watch import service as service_module
    course = _course(tmp_path)
    name = submit_like_nbgrader(course, tmp_path, "ada")
    service, journal, said = _service(course, tmp_path)

    def full(*args):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(service_module, "publish", full)
    service.step()
    assert not journal.state.entries[name].done and any("No space left" in line for line in said)
    monkeypatch.undo()
    service.retry.clear()                                               # its 30 s are up
    service.step()
    assert journal.state.entries[name].published and service.grader.asked == ["ada"]    # graded once


def test_a_missing_feedback_folder_is_made_as_release_feedback_makes_it(tmp_path):
    from autograder.watch.publish import ensure_folder
    (tmp_path / "course-folder").mkdir()
    ensure_folder(tmp_path / "course-folder" / "feedback")
    assert (tmp_path / "course-folder" / "feedback").stat().st_mode & 0o7777 == 0o711
    with pytest.raises(ValueError, match="release_assignment"):
        ensure_folder(tmp_path / "nowhere" / "feedback")


def test_other_assignments_submissions_are_left_alone(tmp_path):
    course = _course(tmp_path)
    name = submit_like_nbgrader(course, tmp_path, "ada")
    other = name.replace(f"+{A}+", "+ps2+")
    (_inbound(tmp_path) / name).rename(_inbound(tmp_path) / other)
    service, journal, said = _service(course, tmp_path)
    service.step()
    assert service.grader.asked == [] and other not in journal.state.entries and said == []


def test_a_record_that_cannot_be_saved_is_graded_again_later_without_blame(tmp_path, monkeypatch):
    from autograder.watch import service as service_module
    course = _course(tmp_path)
    name = submit_like_nbgrader(course, tmp_path, "ada")
    service, journal, said = _service(course, tmp_path)
    real = service_module.write_atomic

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")
    for _ in range(2):
        monkeypatch.setattr(service_module, "write_atomic", full)
        service.step()
        service.retry.clear()
    assert not journal.state.entries[name].done and journal.state.entries[name].starts == 0
    monkeypatch.setattr(service_module, "write_atomic", real)
    service.step()
    assert journal.state.entries[name].published.kind == "feedback" and service.grader.asked == ["ada"] * 3


# --- when a submission counts as received: the service's clock, on the files it grades ---------------
def _due_soon(course, seconds: float) -> float:
    """A due date ``seconds`` from now in the course's gradebook; returns it as a POSIX time."""
    due = time.time() + seconds
    with _gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.add_assignment(A, duedate=datetime.fromtimestamp(due, timezone.utc).replace(tzinfo=None))
    return due


def _rewrite_in_place(folder, notebook="ex1_attention.ipynb"):
    path = folder / notebook
    text = path.read_text()
    with open(path, "r+") as f:                      # the same file, its folder untouched
        f.write(text.replace("softmax", "softmaX", 1))


def test_a_notebook_rewritten_in_place_after_the_due_date_counts_as_received_after_it(tmp_path):
    """Writing a file in place never moves its folder's change time, and timestamp.txt is the student's:
    the notebooks' own change times (the kernel's) say when the work was complete."""
    course = _course(tmp_path)
    name = submit_like_nbgrader(course, tmp_path, "ada")          # before the due date, timestamp.txt too
    due = _due_soon(course, 1.0)
    time.sleep(max(0.0, due - time.time()) + 0.3)
    _rewrite_in_place(tmp_path / "exchange/attention-course/inbound" / name)
    service, journal, said = _service(course, tmp_path)
    service.step()
    state = journal.state.entries[name]
    assert state.received.received > due and state.published.kind == "closed" and service.grader.asked == []


def test_a_backlog_read_after_the_due_date_counts_as_received_when_its_files_were_complete(tmp_path):
    course = _course(tmp_path)
    name = submit_like_nbgrader(course, tmp_path, "ada")
    due = _due_soon(course, 1.0)
    time.sleep(max(0.0, due - time.time()) + 0.3)                 # the service starts late
    service, journal, said = _service(course, tmp_path)
    service.step()
    state = journal.state.entries[name]
    assert state.received.received < due and state.published.kind == "feedback" and service.grader.asked == ["ada"]
    assert state.received.submission == folder_digest(tmp_path / "exchange/attention-course/inbound" / name, read_course(course, A))


def test_what_is_graded_is_exactly_what_was_received(tmp_path):
    """A rewrite between the service's reading and the grading (or across a restart) is not graded into a page."""
    course = _course(tmp_path)
    name = submit_like_nbgrader(course, tmp_path, "ada")
    service, journal, said = _service(course, tmp_path)
    real = service.grader.submit

    def rewritten_first(job):
        _rewrite_in_place(Path(job.folder))
        real(job)
    service.grader.submit = rewritten_first
    service.step()
    state = journal.state.entries[name]
    assert state.published is None and state.graded is None
    assert "changed after the service received them" in state.note and not journal.state.checks.get("ada")


def test_settled_covers_the_files_graded_not_only_the_folder(tmp_path):
    course = _course(tmp_path)
    name = submit_like_nbgrader(course, tmp_path, "ada")
    inbound = tmp_path / "exchange/attention-course/inbound"
    (inbound / name).chmod(0o755)                                 # nbgrader's submit not done with it
    before = _examine(inbound, name)
    _rewrite_in_place(inbound / name)
    after = _examine(inbound, name)
    assert isinstance(before, Waiting) and isinstance(after, Waiting) and before.signature != after.signature


# --- the account bounds what it can consume (real Linux accounts) ------------------------------------
@pytest.fixture
def accounts():
    """Two real accounts of this machine, removed after the test (creating them needs root)."""
    import pwd
    import subprocess
    if os.geteuid() != 0:
        pytest.skip("creating Linux accounts for the owner check needs root")
    names = [f"hb{os.getpid() % 10000}{who}" for who in ("ann", "eve")]
    for name in names:
        subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", name], check=True, timeout=30)
    try:
        yield {name: pwd.getpwnam(name).pw_uid for name in names}
    finally:
        for name in names:
            subprocess.run(["userdel", name], timeout=30, check=False)


def _owned(folder, uid):
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, uid, uid, follow_symlinks=False)


def test_with_accounts_a_folder_bears_its_owners_name_and_an_invented_name_is_an_impostor(tmp_path, accounts):
    ann, eve = accounts
    course = _course(tmp_path)
    inbound = tmp_path / "exchange/attention-course/inbound"
    names = {who: submit_like_nbgrader(course, tmp_path, who) for who in (ann, eve, "ghost-student")}
    for who in names:
        _owned(inbound / names[who], accounts[eve])                 # eve made all three
    assert isinstance(_examine(inbound, names[eve]), Ready)
    assert f"not to '{ann}'" in _examine(inbound, names[ann]).note
    invented = _examine(inbound, names["ghost-student"]).note
    assert f"belongs to '{eve}'" in invented and "no account has that name" in invented
    _owned(inbound / names["ghost-student"], os.geteuid())          # the service's own (shared) account
    assert isinstance(_examine(inbound, names["ghost-student"]), Ready)


def test_one_account_flooding_never_stands_before_another_accounts_first_submission(tmp_path, accounts):
    ann, eve = accounts
    course = _course(tmp_path)
    inbound = tmp_path / "exchange/attention-course/inbound"
    flood = [submit_like_nbgrader(course, tmp_path, eve) for _ in range(4)]
    mine = submit_like_nbgrader(course, tmp_path, ann)               # arrives after all of eve's
    for name in [*flood, mine]:
        _owned(inbound / name, accounts[eve if name in flood else ann])
    service, journal, said = _service(course, tmp_path)
    service.step()
    assert service.grader.asked == [eve, ann]                       # one each, then eve's next ones
    assert journal.state.entries[mine].published.kind == "feedback"
    for _ in range(10):                                             # each pass: one of eve's
        if service.step() != 0.0:
            break
    assert service.grader.asked == [eve, ann, eve, eve, eve]


def test_watchs_bookkeeping_reads_only_the_graded_notebooks_of_a_folder_of_sparse_files(tmp_path, monkeypatch):
    """2,000 sparse files claiming 500 GB beside the notebooks: receiving the submission reads its notebooks
    only, so the next student's page is not kept waiting (it was minutes)."""
    course = _course(tmp_path)
    name = submit_like_nbgrader(course, tmp_path, "ada")
    folder = tmp_path / "exchange/attention-course/inbound" / name
    for i in range(2_000):
        with open(folder / f"junk{i:04d}.ipynb.bak", "wb") as f:
            f.truncate(256 << 20)
    count, real = [0], os.read

    def counting(fd, n):
        data = real(fd, n)
        count[0] += len(data)
        return data
    monkeypatch.setattr(os, "read", counting)
    service, journal, said = _service(course, tmp_path)
    service.step()
    assert journal.state.entries[name].published.kind == "feedback"
    assert count[0] < 4 << 20
