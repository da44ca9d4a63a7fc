"""Late-submission penalties, assigned in the gradebook writer process exactly as ``nbgrader autograde``
assigns them: per notebook, by nbgrader's ``AssignLatePenalties`` with the plugin the course configures
(``c.AssignLatePenalties.plugin_class``; nbgrader's default ``LateSubmissionPlugin`` gives no penalty).

How late a submission is comes from nbgrader's own gradebook: the submission's timestamp (from its
``timestamp.txt``) against the assignment's due date (``nbgrader db assignment add --duedate``) plus any
extension. The plugin is the instructor's code, loaded from the course folder as nbgrader loads it.
"""
from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

from ..course.nbgrader_cli import tool_env
from ..course.settings import Course, load_course
from .timestamps import written_time

SECTIONS = ("AssignLatePenalties", "LateSubmissionPlugin")


class LatePenalties:
    """Loads the course's plugin on the first late submission (most batches never need it)."""

    def __init__(self, course: Course):
        self.course = course
        self._assigner = None

    def assign(self, gb, assignment: str, student: str) -> dict:
        """Set each notebook's ``late_submission_penalty`` as nbgrader does; return what was set."""
        submission = gb.find_submission(assignment, student)
        for notebook in submission.notebooks:
            self.assign_notebook(submission, notebook, student)
        return recorded_lateness(submission)

    def assign_notebook(self, submission, notebook, student: str) -> None:
        """One notebook's penalty, as nbgrader's AssignLatePenalties sets it after autograding it."""
        late = submission.total_seconds_late
        notebook.late_submission_penalty = self._penalty(student, notebook, late) if late > 0 else None

    def _penalty(self, student: str, notebook, late: float) -> float | None:
        assigner = self._load()
        penalty = assigner.plugin_inst.late_submission_penalty(student, notebook.score, late)
        return None if penalty is None else assigner._check_late_penalty(notebook, penalty)

    def _load(self):
        if self._assigner is None:
            self._assigner = load_assigner(self.course)
        return self._assigner


def recorded_lateness(submission) -> dict:
    """How late the gradebook says ``submission`` is, and each notebook's penalty, as recorded now."""
    due, at = submission.duedate, submission.timestamp      # the time recorded now or by an earlier run
    return {"seconds_late": float(submission.total_seconds_late), "due": written_time(due) if due else "",
            "penalties": {nb.name: float(nb.late_submission_penalty or 0.0) for nb in submission.notebooks},
            "submitted": written_time(at) if at else ""}


def load_assigner(course: Course):
    """nbgrader's AssignLatePenalties configured from the course's plain settings, its plugin loaded."""
    from traitlets.config import Config

    from nbgrader.preprocessors import AssignLatePenalties
    unread = [n for n in course.unreadable if n.split(".")[0] in SECTIONS]
    if unread:
        raise RuntimeError(f"{', '.join('c.' + n for n in unread)} in {course.root}/nbgrader_config.py is not a "
                           "plain value, so the grader cannot apply the course's late penalty as nbgrader "
                           "would; name the plugin as a string, e.g. 'late.SubMarks'")
    plugins_from(course.root, course.setting("AssignLatePenalties", "plugin_class", ""))
    try:
        assigner = AssignLatePenalties(config=Config(course.settings))
        assigner.init_plugin()
    except Exception as exc:  # noqa: BLE001 - any failure of the instructor's plugin is reported as such
        name = course.setting("AssignLatePenalties", "plugin_class", "LateSubmissionPlugin")
        raise RuntimeError(f"could not load the late-submission plugin {name!r} named in "
                           f"{Path(course.root) / 'nbgrader_config.py'} (c.AssignLatePenalties.plugin_class): "
                           f"{_why(name, exc)}; fix the setting (module.Class, the module in the course "
                           "folder) and grade again") from exc
    return assigner


def plugins_from(root: Path, plugin: str = "") -> None:
    """The course folder first on ``sys.path``, where ``nbgrader autograde`` run in the course finds the plugin
    module (``late.py``): nbgrader puts only its working folder there, and formgrader runs in the instructor's
    home on a Hub, so its Autograde button could not import ``late`` and failed for every student. The module of
    ``plugin`` (module.Class) loaded earlier from another folder (another course's ``late.py``, in a process
    that graded that course) is forgotten, so this course's is imported, not that one's penalties."""
    if str(root) in sys.path:
        sys.path.remove(str(root))
    sys.path.insert(0, str(root))
    module = sys.modules.get(str(plugin).rpartition(".")[0]) if "." in str(plugin) else None
    where = getattr(module, "__file__", None)
    if where and Path(where).resolve().parent != Path(root).resolve():
        del sys.modules[module.__name__]
        importlib.invalidate_caches()


def _why(name, exc: Exception) -> str:
    """What is wrong with the plugin ``name``, in one line (traitlets' own message names an object id)."""
    module, _, cls = str(name).rpartition(".")
    if module:
        try:
            found = importlib.import_module(module)
        except Exception as err:  # noqa: BLE001 - the instructor's module may raise anything
            return f"importing {module} failed ({type(err).__name__}: {_line(err)})"
        if not hasattr(found, cls):
            return f"module {module} ({getattr(found, '__file__', '?')}) has no {cls}"
    return f"{type(exc).__name__}: {_line(exc)}"


def _line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:300]


def check_plugin(course: Course) -> None:
    """Before grading: when the course sets a late-submission plugin, load it as nbgrader would, in a
    separate process (nbgrader is slow to import; the plugin is the instructor's code), and raise
    ValueError with one line saying what is wrong. A course on nbgrader's default loads nothing."""
    if not any(s in course.settings for s in SECTIONS) and not any(n.split(".")[0] in SECTIONS
                                                                   for n in course.unreadable):
        return
    proc = subprocess.run([sys.executable, "-m", "autograder.gradebook.latepenalties", str(course.root)],
                          cwd=course.root, capture_output=True, text=True, env=tool_env(), timeout=300, check=False)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or [f"the check exited with status {proc.returncode}"]
        raise ValueError(lines[-1])


def main(argv=None) -> int:
    """``python -m autograder.gradebook.latepenalties COURSE``: load the course's plugin; one line and
    status 1 if it cannot be loaded."""
    args = sys.argv[1:] if argv is None else argv
    try:
        load_assigner(load_course(args[0]))
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
