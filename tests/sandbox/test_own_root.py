"""A worker learns nothing of any file outside what it was given (issue 35, item 9).

Landlock decides what a worker may open, not what it may stat or watch: with the host's tree in view a worker
saw classmates' folders, their record files and the gradebook's size change. Here student code in a worker
of a root grader (the tested deployment) tries each way on a course outside /tmp, as a course in a home
folder is: stat, list, inotify, and the grader's own process in /proc; and it still does what an honest
notebook does. tests/env/hub/test_grading_account.py asks the same of a worker of a grader that is not root.
"""
import os

import pytest

from autograder.sandbox.forkclient import ForkServer
from autograder.sandbox.handle import WorkerHandle
from autograder.sandbox.limits import Limits
from autograder.sandbox.status import LayerStatus, State
from hub_grading import LEAKS, class_folder, learned, snoop_code

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the tested deployment's grader is root here")

HONEST = """
import numpy as np, os, matplotlib.pyplot as plt
with open("notes.txt", "w") as f:
    f.write("mine")
plt.plot(np.arange(3.0)); plt.savefig("plot.png")
print("HONEST", sorted(os.listdir(".")), os.stat("notes.txt").st_size, np.linalg.inv(np.eye(2)).sum())
"""


@pytest.fixture(scope="module")
def snooped():
    """What one worker learned of a course outside /tmp, its status, and what its honest cell printed."""
    with class_folder() as course:
        server = ForkServer()
        try:
            handle = WorkerHandle(server, Limits())
            try:
                assert handle.run_cell(snoop_code(course, os.getpid()), 30)["ok"]
                assert handle.run_cell(HONEST, 30)["ok"]
                printed = handle.request({"op": "output"}, 10)[0]["stdout"]
            finally:
                handle.cleanup()
        finally:
            server.close()
    return learned(printed), handle.status, printed


@pytest.mark.parametrize("leak", LEAKS)
def test_a_worker_learns_nothing_of_the_course_nor_of_the_grader(snooped, leak):
    found, _, _ = snooped
    assert leak not in found, f"{leak}: {found[leak]}"


def test_the_worker_says_it_has_a_root_of_its_own(snooped):
    _, status, _ = snooped
    assert LayerStatus.parse(status["own root"]).state is State.APPLIED, status["own root"]
    assert LayerStatus.parse(status["private /tmp"]).state is State.APPLIED, status["private /tmp"]


def test_an_honest_notebook_still_works_in_its_own_root(snooped):
    _, _, printed = snooped
    line = next(line for line in printed.splitlines() if line.startswith("HONEST"))
    assert line == "HONEST ['notes.txt', 'plot.png'] 4 2.0", printed
