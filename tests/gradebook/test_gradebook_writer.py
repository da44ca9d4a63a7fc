"""The gradebook writer's cost: nbgrader's API without its server extensions, one commit per phase."""
import json
import subprocess
import sys

import pytest
from sqlalchemy import event

from autograder.course.settings import load_course
from autograder.gradebook.latepenalties import LatePenalties
from autograder.gradebook.nbgrader_api import nbgrader_api, one_transaction, stamp_new_sqlite
from autograder.gradebook.messages import Scores
from autograder.gradebook.scores import BATCH, record_assignment, write_scores
from autograder.grading.rubric import RUBRIC
from conftest import ROOT

pytestmark = pytest.mark.filterwarnings("ignore:.*not in session")      # nbgrader's own add_submission


def _commits(gb) -> list:
    seen = []
    event.listen(gb.db.get_bind(), "commit", lambda conn: seen.append(1))
    return seen


def _scores(n: int) -> list[Scores]:
    earned = {grade_id: float(sum(item.points for item in items)) for grade_id, items in RUBRIC.items()}
    return [Scores(f"s{i:02d}", earned, {"ex1_attention": ("a reason",)} if i == 0 else {}) for i in range(n)]


def test_the_structure_is_one_commit_and_the_scores_one_per_small_batch(tmp_path):
    """nbgrader's API commits after every row (on SQLite each commit waits for the disk): the writer
    records the assignment's structure in one transaction and the class's scores in short ones, at
    most BATCH students each, so formgrader never waits for the whole class."""
    url = f"sqlite:///{tmp_path / 'gb.db'}"
    stamp_new_sqlite(url)
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        commits = _commits(gb)
        with one_transaction(gb):
            record_assignment(gb, ROOT, "ch04_attention")
        assert len(commits) == 1
        write_scores(gb, "ch04_attention", _scores(BATCH + 4), LatePenalties(load_course(ROOT)))
        assert len(commits) == 3                                        # BATCH students, then 4
    with nbgrader_api().Gradebook(url, "attention-course") as gb:      # a fresh session reads it all back
        assert len(gb.students) == BATCH + 4
        assert gb.find_submission("ch04_attention", "s03").score == sum(i.points for items in RUBRIC.values()
                                                                        for i in items)
        assert all(g.needs_manual_grade == (nb.name == "ex1_attention")
                   for nb in gb.find_submission("ch04_attention", "s00").notebooks for g in nb.grades if g.max_score > 0)


def test_a_block_that_fails_leaves_the_gradebook_as_it_was(tmp_path):
    url = f"sqlite:///{tmp_path / 'gb.db'}"
    stamp_new_sqlite(url)
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        with one_transaction(gb):
            record_assignment(gb, ROOT, "ch04_attention")
        with pytest.raises(SystemExit), one_transaction(gb):
            gb.update_or_create_student("ada")
            raise SystemExit("the writer stops")
        gb.update_or_create_student("bob")                  # commits work again after the block
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        assert [s.id for s in gb.students] == ["bob"]


def test_nbgrader_is_loaded_without_its_server_extensions():
    code = ("import sys\nfrom autograder.gradebook.writer import nbgrader_api\napi = nbgrader_api()\n"
            "import nbgrader\nprint(api.Gradebook.__name__, bool(nbgrader.__version__),\n"
            "      any(m.startswith(('jupyter_server', 'nbgrader.server_extensions')) for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["Gradebook", "True", "False"]


def test_nbgrader_s_archive_helpers_load_only_when_called(tmp_path):
    """The writer loads nbgrader.api without setuptools (nbgrader.utils imports its archive helpers at
    import time); a helper still works when called, through the real module."""
    archive = tmp_path / "one.zip"
    code = ("import sys, zipfile\nfrom autograder.gradebook.writer import nbgrader_api\napi = nbgrader_api()\n"
            "print('setuptools' in sys.modules)\n"
            f"zipfile.ZipFile({str(archive)!r}, 'w').writestr('inside.txt', 'kept')\n"
            "import nbgrader.utils as u\n"
            f"u.unpack_archive({str(archive)!r}, {str(tmp_path / 'out')!r}, drivers=(u.unpack_zipfile,))\n"
            "print('setuptools' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["False", "True"]
    assert (tmp_path / "out/inside.txt").read_text() == "kept"


def test_a_late_penalty_plugin_that_imports_setuptools_gets_the_real_one(tmp_path):
    """The archive helpers' stand-in is there only while nbgrader.api loads: an instructor's plugin (loaded
    later, in the writer) that imports setuptools.archive_util gets the whole real module. With the stand-in
    left in place it failed to load there, after the class was graded, although grade's check of the plugin
    (a process of its own) had passed."""
    (tmp_path / "nbgrader_config.py").write_text('c = get_config()\nc.CourseDirectory.course_id = "x"\n'
                                                 'c.AssignLatePenalties.plugin_class = "late.Half"\n')
    (tmp_path / "late.py").write_text(
        "import setuptools.archive_util\nfrom setuptools.archive_util import UnrecognizedFormat\n"
        "from nbgrader.plugins import LateSubmissionPlugin\n\n\nclass Half(LateSubmissionPlugin):\n"
        "    def late_submission_penalty(self, student_id, score, total_seconds_late):\n"
        "        return score / 2 if setuptools.archive_util.UnrecognizedFormat is UnrecognizedFormat else 0.0\n")
    code = ("import sys\nfrom autograder.gradebook.writer import nbgrader_api\n"
            "from autograder.gradebook.latepenalties import load_assigner\n"
            "from autograder.course.settings import load_course\nnbgrader_api()\n"
            "print('setuptools' in sys.modules)\n"
            f"assigner = load_assigner(load_course({str(tmp_path)!r}))\n"
            "print(assigner.plugin_inst.late_submission_penalty('s01', 3.0, 60))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-600:]
    assert out.stdout.split() == ["False", "1.5"]


def test_an_existing_gradebook_is_opened_without_loading_alembic(tmp_path):
    """Only a new gradebook is stamped with nbgrader's alembic head; loading alembic for one that exists
    cost each run about 0.1 s of the writer's time, while the class is graded."""
    url = f"sqlite:///{tmp_path / 'gb.db'}"
    stamp_new_sqlite(url)
    code = ("import sys\nfrom autograder.gradebook.nbgrader_api import stamp_new_sqlite\n"
            f"stamp_new_sqlite({url!r})\nprint(any(m.startswith('alembic') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["False"]
    fresh = f"sqlite:///{tmp_path / 'new.db'}"
    code = code.replace(repr(url), repr(fresh))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["True"] and (tmp_path / "new.db").stat().st_size > 0


def test_scores_are_written_as_they_come(tmp_path):
    """The writer records each student when the run sends it (the run streams them as records are
    written), not once the whole class is in: when the second student arrives the first is recorded."""
    url = f"sqlite:///{tmp_path / 'gb.db'}"
    stamp_new_sqlite(url)
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        with one_transaction(gb):
            record_assignment(gb, ROOT, "ch04_attention")
        seen = []

        def stream():
            for i, score in enumerate(_scores(3)):
                if i:
                    seen.append(gb.find_submission("ch04_attention", f"s{i - 1:02d}").score)
                yield score
        lateness = write_scores(gb, "ch04_attention", stream(), LatePenalties(load_course(ROOT)))
    assert len(seen) == 2 and all(score > 0 for score in seen) and sorted(lateness) == ["s00", "s01", "s02"]


def test_the_writer_reads_a_stream_of_lines_and_lists(tmp_path):
    import io
    from autograder.gradebook.writer import Incoming
    scores = _scores(3)
    text = "".join(json.dumps(s.to_dict()) + "\n" for s in scores[:2]) + json.dumps([s.to_dict() for s in scores[2:]])
    incoming = Incoming(io.StringIO(text))
    assert list(incoming) == scores and incoming.received
    batched = Incoming(io.StringIO(text))
    batched.thread.join()                               # all three have come: one batch of the two lines
    assert [[s.student for s in b] for b in batched.batches(2)] == [["s00", "s01"], ["s02"]]
    assert list(empty := Incoming(io.StringIO(""))) == [] and not empty.received


def test_a_batch_sends_each_record_to_the_writer_as_it_is_written(tmp_path, monkeypatch):
    from autograder.gradebook.client import GradebookWriter
    from autograder.run.batch import grade_batch
    from batch_helpers import make_class
    course = make_class(tmp_path, ["correct-1", "no-scaling", "mask-missing"])
    events = []
    real_send, real_finish = GradebookWriter.send, GradebookWriter.finish
    monkeypatch.setattr(GradebookWriter, "send", lambda self, record, submitted="", changed=False: (
        events.append(("send", record.student_id, (tmp_path / "course/grading/records" /
                                                   f"{record.student_id}.json").exists())),
        real_send(self, record, submitted))[1])
    monkeypatch.setattr(GradebookWriter, "finish", lambda self, records, submitted=None, *args, **kw: (
        events.append(("finish", sorted(r.student_id for r in records if r.student_id not in self.sent))),
        real_finish(self, records, submitted, *args, **kw))[1])
    result = grade_batch(course=course, workers=1, progress=False)
    assert not result.errors
    assert sorted(events[:3]) == [("send", s, True) for s in ("correct-1", "mask-missing", "no-scaling")]
    assert events[3:] == [("finish", [])]                 # nothing was left to send at the end


def test_the_writer_gives_the_gradebook_the_points_grade_grades_with(tmp_path):
    """A cell re-weighted in source/ after generate_assignment: the writer of the next run records the source's
    points (as generate_assignment --force would), keeping every score a person gave; before, the grade cell
    kept its old maximum and the run's scores above it were refused."""
    from autograder.gradebook.scores import _record_structure
    from batch_helpers import make_class
    course = make_class(tmp_path, [])
    url = f"sqlite:///{tmp_path / 'gb.db'}"
    stamp_new_sqlite(url)
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        _record_structure(gb, course, "ch04_attention")
        gb.update_or_create_student("ada")
        gb.add_submission("ch04_attention", "ada")
        grade = gb.find_grade("ex2_causal", "ex2_causal_mask", "ch04_attention", "ada")
        grade.manual_score = 5.0
        gb.db.commit()
    path = course / "source/ch04_attention/ex2_causal_mask.ipynb"
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "ex2_causal":
            cell["metadata"]["nbgrader"]["points"] = 8
    path.write_text(json.dumps(nb))
    with nbgrader_api().Gradebook(url, "attention-course") as gb:
        _record_structure(gb, course, "ch04_attention")
        gb.db.commit()
        assert gb.find_grade_cell("ex2_causal", "ex2_causal_mask", "ch04_attention").max_score == 8
        assert gb.find_grade("ex2_causal", "ex2_causal_mask", "ch04_attention", "ada").manual_score == 5.0


def test_a_sqlite_gradebook_left_without_its_version_stamp_gets_it(tmp_path):
    """nbgrader's tables without alembic_version (a first nbgrader command that could not run alembic)."""
    import sqlite3

    from nbgrader.api import Base
    from sqlalchemy import create_engine

    from autograder.gradebook.nbgrader_api import _alembic_head
    path = tmp_path / "gradebook.db"
    engine = create_engine(f"sqlite:///{path}")
    Base.metadata.create_all(bind=engine)
    engine.dispose()
    stamp_new_sqlite(f"sqlite:///{path}")
    stamp_new_sqlite(f"sqlite:///{path}")
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [(_alembic_head(),)]
