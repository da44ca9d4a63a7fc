"""``watch`` goes on serving when a submission stalls its grading (issue 35, item 1).

A student whose notebook stops its worker reading before a cell of 2 MiB stopped the service: its grading
process blocked in a write, and no classmate got a page again. Now the worker is ended at its deadline, the
student's page says the notebook needs review, and the next student is served. Where a deadline is missing
(grading processes with the old blocking write), the service loop's watchdog (its executor's) ends the
grading process past the job's bound, charges the submission and serves the next. Each hung on the code
without the fix (``pytest.mark.timeout`` ends it as a failure)."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from autograder.journal.log import read_events
from autograder.run import executors
from autograder.sandbox import rpc
from autograder.sandbox.limits import Limits
from autograder.watch import service
from deaf_workers import DEAF, SHORT, blocking_send_all, ended_by_deadline, plant
from watch_helpers import submit_like_nbgrader

INBOUND = ("exchange", "attention-course", "inbound")


def _course(tmp_path):
    from batch_helpers import make_class
    course = make_class(tmp_path, [])
    (tmp_path.joinpath(*INBOUND)).mkdir(parents=True)
    (tmp_path / "exchange" / "attention-course" / "feedback").mkdir()
    with open(course / "nbgrader_config.py", "a") as f:
        f.write(f'\nc.Exchange.root = "{tmp_path / "exchange"}"\n')
    return course


def _serve(tmp_path, monkeypatch, limits: Limits) -> dict:
    """The deaf student's submission, then an honest classmate's, served by ``watch`` until both have pages;
    student -> (their graded event, their record)."""
    course = _course(tmp_path)
    deaf = submit_like_nbgrader(course, tmp_path, DEAF)
    plant(tmp_path.joinpath(*INBOUND, deaf))
    later = submit_like_nbgrader(course, tmp_path, "ada")
    plain = service.inbound_job
    monkeypatch.setattr(service, "inbound_job", lambda *args: replace(plain(*args), limits=limits))
    journal = course / "watch" / "journal.jsonl"

    def published(entry):
        return any(e.entry == entry and e.EVENT == "published" for e in read_events(journal))
    service.watch(course=course, poll=0.05, say=print, warn=print, until=lambda: published(deaf) and published(later))
    from autograder.run.job import Graded
    return {e.student: (e, Graded.from_dict(json.loads((course / "watch" / "records" / e.record).read_text())).record)
            for e in read_events(journal) if e.EVENT == "graded"}


@pytest.mark.timeout(240)
def test_watch_ends_a_worker_that_stops_reading_and_serves_the_next_student(tmp_path, monkeypatch):
    graded = _serve(tmp_path, monkeypatch, SHORT)
    assert graded["ada"][0].total == 28 and not graded["ada"][0].review
    event, record = graded[DEAF]
    assert event.review and 0 < event.total < 28                       # graded as far as it goes, for review
    assert ended_by_deadline(record.integrity), record.integrity


@pytest.mark.timeout(300)
def test_the_service_loops_watchdog_ends_a_stalled_grading_and_serves_the_next_student(tmp_path, monkeypatch):
    """The grading process (forked by ``watch`` after this) writes as before the fix; the submission's own
    watchdog waits (a long overrun), the loop's acts: 8 s for the deaf student's job."""
    monkeypatch.setattr(rpc, "send_all", blocking_send_all)
    monkeypatch.setattr(executors, "job_bound", lambda job: 8.0 if job.student == DEAF else None)
    graded = _serve(tmp_path, monkeypatch, Limits(cell_seconds=2, call_seconds=2, total_seconds=10, spawns=2,
                                                  overrun_seconds=600))
    assert graded["ada"][0].total == 28 and not graded["ada"][0].review
    event, record = graded[DEAF]
    assert event.review and event.total == 0 and "the watchdog ended its grading" in record.integrity[0]
