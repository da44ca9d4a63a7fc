"""`watch` while the PostgreSQL gradebook is down (issue 38, minor): it logged SQLAlchemy's 1,000-character error
for every submission and gave feedback as if there were no due date (a submission after the due date got
pre-deadline feedback). One line now, and no decision that needs the due date until the gradebook can be
read: the submission waits, and is checked once the server is back. A real server, stopped and restarted;
the service's rules with a stand-in grader (tests/watch/test_watch_units.py has the same)."""
from datetime import datetime


from autograder.course.settings import load_course
from autograder.journal.log import Journal
from autograder.run.job import Graded, failed
from autograder.watch.config import watch_settings
from autograder.watch.service import Service
from batch_helpers import make_class
from watch_helpers import A, submit_like_nbgrader



class StandIn:
    """Grades nothing: records whom it was asked for and answers a record for review."""
    serial, busy = True, 0

    def __init__(self):
        self.asked, self.done = [], []

    def submit(self, job):
        self.asked.append(job.student)
        self.done.append((job, Graded(failed(job, "stand-in"))))

    def finished(self, wait=False):
        done, self.done = self.done, []
        return done


def test_watch_waits_for_a_gradebook_that_is_down_and_says_so_in_one_line(postgres, tmp_path):
    from autograder.gradebook.nbgrader_api import nbgrader_api, stamp_new
    url = postgres.create_database("watchdown")
    stamp_new(url)
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        gb.update_or_create_assignment(A, duedate=datetime(2020, 1, 1))      # long past: the page says closed
    course = make_class(tmp_path, [])
    (tmp_path / "exchange" / "attention-course" / "inbound").mkdir(parents=True)
    (tmp_path / "exchange" / "attention-course" / "feedback").mkdir()
    with open(course / "nbgrader_config.py", "a") as f:
        f.write(f'\nc.Exchange.root = "{tmp_path / "exchange"}"\nc.CourseDirectory.db_url = "{url}"\n')
    settings = watch_settings(load_course(course), A)
    (settings.state / "records").mkdir(parents=True, exist_ok=True)
    said, journal = [], Journal(settings.state)
    service = Service(settings, journal, StandIn(), said.append, said.append)
    pages = tmp_path / "exchange" / "attention-course" / "feedback"
    name = submit_like_nbgrader(course, tmp_path, "ada")

    postgres.stop()
    try:
        for _ in range(3):
            service.step()
            service.retry.clear()                             # (as if the retry delay had passed)
    finally:
        postgres.restart()
    assert service.grader.asked == [] and not list(pages.iterdir())      # no feedback, no "closed", on a guess
    assert journal.state.entries[name].published is None
    errors = [line for line in said if "cannot be read" in line]
    assert len(errors) == 1 and len(errors[0]) < 400 and "SELECT" not in errors[0], said
    assert "submissions wait" in errors[0] and "postgresql://postgres@/watchdown" in errors[0]

    service.step()
    assert journal.state.entries[name].published.kind == "closed"           # decided with the due date
    assert any("can be read again" in line for line in said) and service.grader.asked == []
