"""watch sends its grading to a Dask cluster (``--scheduler``): each submission graded there and published as
tests/watch/test_watch_units.py publishes it in the service's own process."""
import pytest

from autograder.journal.log import read_events
from watch_helpers import inbound_course as _course, published as done_in, submit_like_nbgrader


def test_scheduler_sends_the_grading_to_dask(tmp_path):
    distributed = pytest.importorskip("distributed")
    from autograder.watch.service import watch
    course = _course(tmp_path)
    names = [submit_like_nbgrader(course, tmp_path, s, sample) for s, sample in (("ada", "correct-1"),
                                                                                ("bob", "no-scaling"))]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                  dashboard_address=None) as cluster:
        watch(course=course, scheduler=cluster.scheduler_address, poll=0.05, say=print,
              until=lambda: all(done_in(course, n) for n in names))
    graded = {e.student: e for e in read_events(course / "watch" / "journal.jsonl") if e.EVENT == "graded"}
    assert graded["ada"].total == 28 and graded["bob"].diagnoses == ("no-scaling",)
