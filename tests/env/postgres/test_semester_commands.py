"""Every command `init` prints works on both gradebooks (issue 38, major 4): the README's semester as `init`
prints it, each line run as printed, in a shell whose PATH is the system's (the venv's folder is not on it, as
for an instructor who runs the venv's interpreter by its path), one student fetching and submitting through
the exchange between release and collect.

On PostgreSQL the first command (`generate_assignment --force`) failed with an alembic traceback: nbgrader
makes a new gradebook by running `alembic` from the PATH. It had removed release/ first, and left the database
with nbgrader's tables but without its version stamp."""
import os
import subprocess
import sys

import pytest

from autograder.samples.synthetic import fill_notebook, reference_answers
from batch_helpers import export_gradebook, read_csv
from conftest import SOURCE
from nbgrader_fast import run_nbgrader

A = "ch04_attention"
SKIPPED = (" watch ", "jupyter lab")          # a service and an interactive server: not commands that end


def _printed(course) -> list[str]:
    """The lines `init` prints after "Next", comments taken off."""
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")}
    init = subprocess.run([sys.executable, "-m", "autograder", "init", str(course)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert init.returncode == 0, init.stdout + init.stderr
    lines = init.stdout.split("Next (the README's semester, command by command):\n")[1].splitlines()
    commands = [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]
    return [c.split("   # ")[0].strip() for c in commands]


def _student_submits(exchange, home) -> None:
    """ada fetches the assignment, fills in the instructor's answers and submits."""
    import nbformat
    flags = [f"--Exchange.root={exchange}", f"--Exchange.cache={home / 'cache'}", "--course=attention-course",
             "--student=ada", "--log-level=WARN"]
    home.mkdir()
    run_nbgrader(["fetch_assignment", A, *flags], home, "fetch_assignment")
    answers = reference_answers(SOURCE)
    for path in sorted((home / A).glob("*.ipynb")):
        nbformat.write(fill_notebook(nbformat.read(path, as_version=4), answers[path.stem], {}), path)
    run_nbgrader(["submit", A, *flags], home, "submit")


@pytest.fixture(params=["sqlite", "postgresql"])
def gradebook(request, tmp_path):
    if request.param == "sqlite":
        return None
    return request.getfixturevalue("postgres").create_database("semester")


def test_every_command_init_prints_works_on_both_gradebooks(gradebook, tmp_path):
    course, exchange = tmp_path / "course", tmp_path / "exchange"
    exchange.mkdir(mode=0o1777)
    commands = _printed(course)
    config = course / "nbgrader_config.py"
    text = config.read_text() + f'c.Exchange.root = "{exchange}"\n'           # as init's comment says to
    if gradebook:
        text = text.replace('"sqlite:///gradebook.db"', repr(gradebook))        # and, for PostgreSQL, db_url
    config.write_text(text)
    cd, export, *rest = commands
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")}
    for command in rest:
        if any(skip in f" {command} " for skip in SKIPPED):
            continue
        done = subprocess.run(["bash", "-c", f"{cd} && {export} && {command}"], capture_output=True, text=True,
                              env=env, timeout=900)
        assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-3000:])
        if "release_assignment" in command:
            _student_submits(exchange, tmp_path / "ada")
    assert sorted(p.name for p in (course / "release" / A).glob("*.ipynb")) == [
        "ex1_attention.ipynb", "ex2_causal_mask.ipynb", "ex3_memory.ipynb", "ex4_cross_attention.ipynb"]
    rows = read_csv(course / "grading/grades.csv")
    assert [r["student_id"] for r in rows] == ["ada"] and rows[0]["total"] == "28"
    assert export_gradebook(course) == {"ada": 28.0}
    assert _stamped(gradebook or f"sqlite:///{course / 'gradebook.db'}")


def _stamped(url: str) -> bool:
    from sqlalchemy import create_engine, text
    engine = create_engine(url)
    try:
        with engine.connect() as db:
            return bool(db.execute(text("SELECT version_num FROM alembic_version")).scalar())
    finally:
        engine.dispose()


def test_a_gradebook_a_failed_first_command_left_unstamped_gets_nbgraders_stamp(postgres, tmp_path):
    """What the failed first command left (nbgrader's tables, no alembic_version): `nbgrader db upgrade` would
    then run every migration from the start over existing tables. The writer of the next `grade` stamps it with
    the head nbgrader's models are at, as nbgrader would have."""
    from nbgrader.api import Base
    from sqlalchemy import create_engine

    from autograder.gradebook.nbgrader_api import _alembic_head, stamp_new
    url = postgres.create_database("unstamped")
    engine = create_engine(url)
    Base.metadata.create_all(bind=engine)
    engine.dispose()
    assert not _stamped_or_none(url)
    stamp_new(url)
    assert _stamped(url) and _stamped_or_none(url) == _alembic_head()
    stamp_new(url)                                                    # once only
    assert postgres.sql("unstamped", "SELECT count(*) FROM alembic_version") == [(1,)]


def _stamped_or_none(url: str):
    from sqlalchemy import create_engine, inspect, text
    engine = create_engine(url)
    try:
        with engine.connect() as db:
            if "alembic_version" not in inspect(db).get_table_names():
                return None
            return db.execute(text("SELECT version_num FROM alembic_version")).scalar()
    finally:
        engine.dispose()
