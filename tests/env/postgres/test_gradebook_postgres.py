"""The gradebook on a real PostgreSQL server (the ``postgres`` fixture): the run lock, grading and
resuming, nbgrader's own export and formgrader on the same database, due dates for watch."""
import subprocess
import sys

import pytest

from autograder.gradebook.holder import RunLocked
from autograder.gradebook.pglock import ServerRunLock, held_by
from autograder.gradebook.runlock import RunLocks
from pg_server import wait_until

pytestmark = pytest.mark.filterwarnings("ignore:.*not in session")      # nbgrader's own add_submission

HOLD = ("import sys, time\nfrom autograder.gradebook.runlock import RunLocks\n"
        "RunLocks(sys.argv[1], sys.argv[2]).__enter__()\nprint('held', flush=True)\ntime.sleep(60)\n")


def test_two_runs_on_one_postgres_gradebook_cannot_interleave(postgres, tmp_path):
    """The advisory lock: a second run is refused with the run lock's one line (the holder's pid and start),
    even from another output folder; the lock goes with the first run's connection, killed or not."""
    url = postgres.create_database("locked")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path / "a"), url], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RunLocked, match=rf"^another grading run \(pid {holder.pid}, started at 20\d\d-.+ UTC\) is "
                                            rf"writing to the gradebook postgresql://postgres@/locked\?host=.*; "
                                            "wait for it or stop it$"):
            RunLocks(tmp_path / "b", url).__enter__()
    finally:
        holder.kill()
        holder.wait()
    with RunLocks(tmp_path / "b", url) as locks:            # killed -9: the server dropped its lock
        assert locks.server_backend
        with pytest.raises(RunLocked):
            ServerRunLock(url).acquire(wait_for_orphans=0)


def test_the_writer_sees_when_the_run_s_lock_is_not_held(postgres):
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session
    url = postgres.create_database("heldby")
    lock = ServerRunLock(url).acquire()
    engine = create_engine(url)
    try:
        with Session(engine) as session:
            assert held_by(session, lock.backend) and not held_by(session, lock.backend + 1)
            backend = lock.backend
            lock.release()
            assert wait_until(lambda: not held_by(session, backend), 10)
    finally:
        lock.release()
        engine.dispose()


def test_a_server_that_cannot_be_reached_is_one_line(tmp_path):
    url = f"postgresql://postgres@/nowhere?host={tmp_path}"
    with pytest.raises(ValueError, match=r"^cannot reach the gradebook postgresql://postgres@/nowhere\?host=.* \("
                                         r".*\): start the database server or fix the URL, then grade again$"):
        RunLocks(tmp_path / "out", url).__enter__()


def on_database(course, url: str) -> None:
    """The course's own gradebook is ``url`` (c.CourseDirectory.db_url), as an instructor sets it."""
    config = course / "nbgrader_config.py"
    text = config.read_text().replace('c.CourseDirectory.db_url = "sqlite:///gradebook.db"',
                                      f'c.CourseDirectory.db_url = "{url}"')
    assert url in text
    config.write_text(text)


def test_grade_resume_formgrader_the_door_and_export_on_postgres(postgres, tmp_path):
    """db_url = "postgresql://...": grade writes the class, formgrader shows it and saves a manual score
    there, grade --resume keeps it and every output shows it, nbgrader's own autograde (our door) and
    export work on the same database; nothing was written to a SQLite file."""
    from autograder.__main__ import main
    from nbgrader_fast import run_nbgrader
    from batch_helpers import export_gradebook, make_class, read_csv
    from formgrader_helpers import formgrader
    from test_formgrader_manual import _notebook_of, _put
    course = make_class(tmp_path, ["correct-1", "no-scaling"])
    url = postgres.create_database("course")
    on_database(course, url)
    assert main(["grade", "--course", str(course), "--workers", "1"]) == 0
    with formgrader(course, tmp_path) as server:
        ex1 = _notebook_of(server, "no-scaling", "ex1_attention")
        grade = next(g for g in server.api(f"grades?submission_id={ex1['id']}") if g["name"] == "ex1_attention")
        _put(server, f"grade/{grade['id']}", {"manual_score": grade["auto_score"] + 1})
        assert main(["grade", "--course", str(course), "--workers", "1", "--resume"]) == 0
        shown = {s["student"]: s["score"] for s in server.api("submissions/ch04_attention")}
    rows = {r["student_id"]: float(r["total"]) for r in read_csv(course / "grading" / "grades.csv")}
    assert rows == export_gradebook(course) == shown and rows["no-scaling"] == 27.0
    run_nbgrader(["autograde", "ch04_attention", "--student", "correct-1", "--force", "--log-level=WARN"],
                 course, "autograde")                         # nbgrader's own door, into the same database
    assert export_gradebook(course) == rows
    assert not list(course.glob("*.db")) and not list((course / "grading").glob("*.db"))


def test_watch_reads_due_dates_and_extensions_from_postgres(postgres, tmp_path):
    from datetime import datetime

    from autograder.gradebook.nbgrader_api import nbgrader_api, stamp_new
    from autograder.watch.duedate import DueDates
    url = postgres.create_database("duedates")
    stamp_new(url)
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        gb.update_or_create_assignment("ch04_attention", duedate=datetime(2026, 12, 1, 12))
        gb.update_or_create_student("ada")
        gb.update_or_create_student("bob")
        gb.add_submission("ch04_attention", "bob", extension=None)
        submission = gb.find_submission("ch04_attention", "bob")
        submission.extension = datetime(2026, 12, 2, 12) - datetime(2026, 12, 1, 12)
        gb.db.commit()
    due = DueDates(url)
    try:
        assert due.due("ch04_attention", "ada") == datetime(2026, 12, 1, 12)
        assert due.due("ch04_attention", "bob") == datetime(2026, 12, 2, 12)
        assert due.due("other", "ada") is None
    finally:
        due.close()


def test_a_writer_whose_run_lost_the_server_lock_writes_nothing(postgres):
    """The writer's check before each commit: while the run's connection holds the advisory lock the
    writer is the run's; once it does not (the run ended, or another took over), it is an orphan."""
    from autograder.gradebook.nbgrader_api import nbgrader_api, stamp_new
    from autograder.gradebook.writer import RunCheck
    url = postgres.create_database("orphan")
    stamp_new(url)
    lock = ServerRunLock(url).acquire()
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        check = RunCheck(None, [], [], backend=lock.backend)
        assert check.ours(gb)
        lock.release()
        assert wait_until(lambda: not check.ours(gb), 10)


def test_the_lms_export_reads_a_postgres_gradebook_as_nbgrader_export_does(postgres, tmp_path):
    from batch_helpers import make_class
    from test_lms_export import check_canvas_export, lms_class
    course = make_class(tmp_path, students=[])
    url = postgres.create_database("lms")
    lms_class(url, course)
    check_canvas_export(course, url, tmp_path)
