"""A batch on a local Dask cluster grades as the local pool does (tests/run/test_batch.py's class)."""
import pytest

from autograder.run.batch import grade_batch
from batch_helpers import SMALL, gradebook_in, make_class, records


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class graded locally just before it is graded on Dask, not a copy of one graded earlier in the run:
    a record says which sandbox layers were on, and one of them (Python readable by any uid) reads the
    machine's folders as they are then (a JupyterHub test makes /root traversable while its Hub runs)."""
    tmp = tmp_path_factory.mktemp("batch")
    course = make_class(tmp)
    grade_batch(course=course, out=tmp / "out", workers=2, progress=False)
    return course, tmp / "out"


def test_dask_local_cluster_equals_local(graded, tmp_path):
    distributed = pytest.importorskip("distributed")
    course, reference_out = graded
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        result = grade_batch(course=course, out=tmp_path / "dask", scheduler=cluster.scheduler_address,
                             progress=False, gradebook_url=gradebook_in(tmp_path / "dask"), create_gradebook=True)
    assert len(result.records) == len(SMALL)
    assert records(tmp_path / "dask") == records(reference_out)
