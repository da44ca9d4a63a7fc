"""nbgrader's own doors through the hardened grader: ``nbgrader autograde`` and formgrader's Autograde button.

The course's ``nbgrader_config.py`` lists these steps in ``c.Autograde.autograde_preprocessors``:

- ``SandboxedExecute`` stands where nbgrader's ``Execute`` stands. For this chapter it runs nothing
  in a kernel: it grades the student's submission as ``grade`` does (intake, one sandboxed worker per
  notebook, the rubric in the grader) and writes each grade cell's output as the hidden-test cell
  would print it, the points last as the cell's value, so nbgrader's own ``SaveAutoGrades`` (partial
  credit), ``AssignLatePenalties`` and export give our scores. The grade cells' hidden tests are taken
  out of the autograded notebook (the grader never runs them), and the student's own markdown is kept
  as text (``outputs.autograded.make_inert``). Any other assignment of the course is
  executed by nbgrader's ``Execute``, exactly as without this setting. The sandbox's fork server ends
  ``c.SandboxedExecute.keep_server`` seconds (30) after a grading that no other follows: formgrader's
  Jupyter server keeps none between two presses of the Autograde button.
- ``FlagForReview`` follows ``SaveAutoGrades``: a notebook that needs a person (its damage, or the whole
  submission's) gets ``needs_manual_grade`` on its grade cells and the reason as its answer cells'
  auto comment, as ``grade`` writes them. A cell a person scored keeps the flag it had before this
  autograde (nbgrader's ``SaveAutoGrades`` flags every such cell again; ``grade`` never does). A test
  cell worth no points (a visible test) is read-only in the notebook written, as ``grade`` writes it:
  formgrader asks for no score beside it.

``HideHiddenTests`` is for ``c.GenerateFeedback.preprocessors``: it removes hidden-test regions from
grade cells only, so no feedback page shows one, and a student's own text never stops a page.
``ForStudents`` follows nbgrader's ``GetGrades`` there: why the grader marked a notebook for review (the
note at its top, the auto comment of its answer cells) is for the instructor in formgrader; the student's
page says only that the notebook awaits review, and nothing once no cell does. A comment a person writes
in formgrader is theirs and is shown, as nbgrader shows it.
nbgrader selects a student's notebooks by name before any of this runs (a renamed notebook is an unknown
one to it, and the missing name scores 0): for each notebook ``grade`` graded from a renamed copy, the door
writes what ``grade`` writes (``run.renamed``), so every door agrees on it.
"""
from __future__ import annotations

import secrets
import tempfile
from pathlib import Path
from weakref import WeakKeyDictionary

from nbformat import from_dict
from nbgrader.preprocessors import ClearHiddenTests, Execute, NbGraderPreprocessor
from nbgrader.utils import is_grade
from traitlets import Dict, Float, List

from ..course.notebooks import handout, strip_hidden_tests
from ..gradebook.latepenalties import plugins_from
from ..intake.expected import is_this_chapter
from ..outputs.autograded import (AWAITS, HEADING, NOTE_ID, SUSPECTED_ID, grade_outputs, make_inert,
                                  no_grade_controls, review_notes)
from ..course.view import read_course
from .executors import InProcess, drain
from .job import current_submission, student_job
from .renamed import renamed_notebooks, score_renamed, write_renamed
from .server import SERVER
from ..gradebook.scores import review_comment
from ..course.settings import load_course
from ..gradebook.scores import REVIEW_COMMENT
from ..sandbox.limits import Limits

_GRADED: dict = {}        # the last submission graded in this process: its key and record
_SNAPSHOTS: WeakKeyDictionary = WeakKeyDictionary()   # an nbgrader converter (one run) -> its snapshot token
KEEP_SERVER = 30.0        # seconds: longer than nbgrader takes between two students of a class


def _priority() -> List:
    """nbconvert's exporters configure ``NbConvertBase.display_data_priority``, which nbgrader's preprocessor
    base declares unconfigurable, so traitlets warned "Config option `display_data_priority` not recognized"
    for each of our steps on every run; nbgrader's own GetGrades declares it configurable, as this does."""
    return List(NbGraderPreprocessor.class_traits()["display_data_priority"].default(), config=True)


class SandboxedExecute(NbGraderPreprocessor):
    """nbgrader's execute step, done by the hardened grader for this chapter (nbgrader's Execute otherwise)."""
    display_data_priority = _priority()
    keep_server = Float(KEEP_SERVER, config=True, help="Seconds the sandbox's fork server (about 73 MB with its "
                        "ready workers) outlives an autograde in a long-lived process such as formgrader's")
    limits = Dict(config=True, help="The sandbox's limits for this door, by name (autograder.sandbox.limits.Limits: "
                  "cell_seconds, call_seconds, total_seconds, overrun_seconds, ...); the defaults where not given")

    def __init__(self, **kwargs):
        """Made before the steps after it (nbgrader makes them in order), so AssignLatePenalties finds the
        course's plugin module wherever the door runs (formgrader in the instructor's home, say)."""
        super().__init__(**kwargs)
        plugins_from(course_root(self))

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        course = course_root(self)
        if not is_this_chapter(course, info["assignment"]):
            return Execute(parent=self.parent, config=self.config).preprocess(nb, resources)
        record = graded_submission(course, info["assignment"], info["student"], self.keep_server, self.limits,
                                   run_snapshot(self))
        make_inert(nb.cells, handout(course, info["assignment"], info["notebook"]))
        fill_grade_cells(nb, record, info["notebook"])
        resources["autograder_review"] = record.review_reasons(info["notebook"])
        resources["autograder_person_flags"] = person_flags(info)
        if _GRADED.get("renamed"):                     # graded by ``grade`` under a name nbgrader skipped
            write_renamed(_GRADED["renamed"], output_folder(self, info))
            resources["autograder_renamed"] = (record, _GRADED["renamed"], course)
        return nb, resources


def person_flags(info: dict) -> dict[str, bool]:
    """grade_id -> needs_manual_grade of each cell of this notebook that a person scored, read before
    nbgrader's SaveAutoGrades, which flags every such cell again on each autograde: FlagForReview puts
    these back, so a person's work is never re-flagged (as ``grade`` never re-flags it)."""
    from nbgrader.api import Gradebook, MissingEntry
    with Gradebook(info["db_url"]) as gb:
        try:
            notebook = gb.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
        except MissingEntry:
            return {}
        return {g.name: bool(g.needs_manual_grade) for g in notebook.grades if g.manual_score is not None}


class FlagForReview(NbGraderPreprocessor):
    """After SaveAutoGrades: the cells of a notebook that needs a person are marked so, with the reason."""
    display_data_priority = _priority()

    def preprocess(self, nb, resources):
        reasons = resources.get("autograder_review")
        kept = resources.get("autograder_person_flags") or {}
        if "autograder_review" in resources:
            no_grade_controls(nb.cells)           # after SaveAutoGrades recorded them: as ``grade`` writes them
        if resources.get("autograder_renamed"):
            _score_renamed(resources)
        if not reasons and not kept:
            return nb, resources                  # another assignment, or nothing a person did or must do
        from nbgrader.api import Gradebook

        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            notebook = gb.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
            for grade in notebook.grades:
                if grade.name in kept:
                    grade.needs_manual_grade = kept[grade.name]     # as the person left it
                elif reasons:
                    flag(grade)
            if reasons:
                review_comment(notebook, reasons)
            gb.db.commit()
        return nb, resources


def _score_renamed(resources) -> None:
    """The renamed notebooks' rows in the gradebook, as ``grade`` writes them (``run.renamed``)."""
    from nbgrader.api import Gradebook

    record, renamed, course = resources["autograder_renamed"]
    with Gradebook(resources["nbgrader"]["db_url"]) as gb:
        score_renamed(gb, resources["nbgrader"], record, renamed, load_course(course))
        gb.db.commit()


def output_folder(step, info: dict) -> Path:
    """nbgrader's autograded folder of the student being graded (its converter's CourseDirectory)."""
    coursedir = _coursedir(step)
    if coursedir is None:
        return course_root(step) / "autograded" / info["student"] / info["assignment"]
    return Path(coursedir.format_path(coursedir.autograded_directory, info["student"], info["assignment"]))


def flag(grade) -> None:
    """Mark one cell for a person unless a person already scored it (their work is never re-flagged)."""
    if grade.manual_score is None and grade.max_score > 0:
        grade.needs_manual_grade = True


class HideHiddenTests(ClearHiddenTests):
    """generate_feedback's step: the hidden-test regions of grade cells are removed; other cells are left
    as they are (nbgrader's ClearHiddenTests stops the page when a student's text holds a delimiter)."""
    display_data_priority = _priority()

    def preprocess_cell(self, cell, resources, index):
        if is_grade(cell):
            cell.source = strip_hidden_tests(cell.source)
        return cell, resources


class ForStudents(NbGraderPreprocessor):
    """generate_feedback's step after GetGrades: the grader's review note and comments are the instructor's."""
    display_data_priority = _priority()

    def preprocess(self, nb, resources):
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if str(meta.get("comment") or "").startswith(REVIEW_COMMENT):
                meta["comment"] = None
        notes = [c for c in nb.cells if str(c.get("id", "")).startswith((NOTE_ID, SUSPECTED_ID))]
        if not notes:
            return nb, resources
        waiting = _awaits_review(resources["nbgrader"])
        nb.cells = [c for c in nb.cells if c not in notes]
        told = [c for c in notes if str(c.get("id", "")).startswith(NOTE_ID)]
        if waiting and told:
            told[0].source = told[0].source.replace(HEADING, AWAITS, 1)
            nb.cells.insert(0, told[0])
        return nb, resources


def _awaits_review(info: dict) -> bool:
    """Whether a cell of this notebook still needs a person (nbgrader's gradebook says)."""
    from nbgrader.api import Gradebook, MissingEntry
    with Gradebook(info["db_url"]) as gb:
        try:
            notebook = gb.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
        except MissingEntry:
            return False
        return bool(notebook.needs_manual_grade)


def _converter(step):
    """The nbgrader converter running ``step`` (the one with a CourseDirectory: one ``nbgrader autograde``
    run, one press of formgrader's Autograde button), or None."""
    parent = step
    while parent is not None:
        if getattr(parent, "coursedir", None) is not None:
            return parent
        parent = getattr(parent, "parent", None)
    return None


def _coursedir(step):
    """The CourseDirectory of the nbgrader converter ``step`` belongs to, or None."""
    converter = _converter(step)
    return converter.coursedir if converter is not None else None


def course_root(step) -> Path:
    """The course folder of the nbgrader command running ``step`` (its converter's CourseDirectory)."""
    coursedir = _coursedir(step)
    return Path(coursedir.root if coursedir is not None else Path.cwd()).resolve()


def run_snapshot(step) -> str | None:
    """The copy-detection snapshot of the run ``step`` belongs to (nbgrader makes a step per notebook): its
    classmates read once per run, as a batch reads them (``intake.integrity.class_index``), not once per
    student. A new run (the button pressed again) reads the class as it is then; no run: None."""
    converter = _converter(step)
    if converter is None:
        return None
    if converter not in _SNAPSHOTS:
        _SNAPSHOTS[converter] = secrets.token_hex(8)
    return _SNAPSHOTS[converter]


def graded_submission(course: Path, assignment: str, student: str, keep_server: float = KEEP_SERVER,
                      limits: dict | None = None, snapshot: str | None = None):
    """The student's record, graded once for all the notebooks nbgrader autogrades one after another,
    and again whenever the submission's content is not what that record graded: the cache lives as long
    as formgrader's server and keys on the content digest the record carries (``job.current_submission``),
    never on names, sizes or times a student controls. The sandbox's fork server ends ``keep_server``
    seconds after the grading, unless the next student's comes first (``nbgrader autograde`` of a class).
    ``limits``: ``c.SandboxedExecute.limits``; ``snapshot``: the run's (``run_snapshot``)."""
    view, checked = read_course(course, assignment), _limits(limits)
    now = (str(course), assignment, student, current_submission(view, student))
    if _GRADED.get("key") != now:
        done = []
        with tempfile.TemporaryDirectory(prefix="autograder-door-") as tmp, SERVER.held(idle=keep_server) as server:
            job = student_job(view, student, limits=checked, autograded=Path(tmp) / "autograded",
                              snapshot=snapshot)                       # autograded: as ``grade`` writes them
            drain(InProcess(server), [job], lambda job, graded: done.append(graded.record))
            renamed = renamed_notebooks(done[0], Path(tmp) / "autograded")
        _GRADED.clear()
        _GRADED.update(key=(*now[:3], done[0].submission), record=done[0], renamed=renamed)
    return _GRADED["record"]


def _limits(given: dict | None) -> dict | None:
    """``c.SandboxedExecute.limits`` checked: every name one of ``Limits``'s."""
    from dataclasses import fields

    unknown = sorted(set(given or {}) - {f.name for f in fields(Limits)})
    if unknown:
        raise ValueError(f"c.SandboxedExecute.limits names {', '.join(map(repr, unknown))}, which is not a sandbox "
                         f"limit; use the names of autograder.sandbox.limits.Limits")
    return dict(given) if given else None


def fill_grade_cells(nb, record, notebook: str) -> None:
    """Each grade cell's output from the record (its checks' lines, its points as the value); hidden tests
    out of the grade cells; a note first when the notebook needs a person. No cell is run here."""
    for cell in nb.cells:
        if is_grade(cell):
            cell.source = strip_hidden_tests(cell.source)
            if cell.cell_type == "code":
                cell.outputs = [from_dict(o) for o in _outputs(record, cell)]
                cell.execution_count = None
    taken = [c.get("id") for c in nb.cells]
    nb.cells[:0] = [from_dict(cell) for cell in review_notes(record, notebook, taken)]


def _outputs(record, cell) -> list[dict]:
    """The cell's outputs; a cell worth points that the record does not grade scores 0, never full marks
    (nbgrader gives full marks to a grade cell without outputs)."""
    outputs = grade_outputs(record, cell.metadata.nbgrader.grade_id)
    if outputs or not float(cell.metadata.nbgrader.get("points", 0) or 0):
        return outputs
    return [{"output_type": "error", "ename": "NotGraded", "evalue": "the hardened grader has no checks for "
             "this cell", "traceback": []}]
