"""Where the exchange is and what the instructor chose, from the course's ``nbgrader_config.py``.

The exchange root and course id are nbgrader's own settings (``c.Exchange.root``, nbgrader's default
when unset; ``c.CourseDirectory.course_id``); the instructor's choices are a section of their own::

    c.FeedbackOnSubmit.show = "full"            # or "diagnosis" (no points), "visible" (visible tests only)
    c.FeedbackOnSubmit.limit = "5/day"          # graded checks per student, per day or hour
    c.FeedbackOnSubmit.after_due_date = False   # keep giving feedback after the due date

nbgrader ignores the section (traitlets applies a section only to a class of that name). The file is
read, never run (see ``autograder.course``): every value here must be a plain literal.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..course.settings import CONFIG, Course
from ..journal.log import STATE_FOLDER
from .limits import Limit, parse_limit

DEFAULT_ROOT = "/usr/local/share/nbgrader/exchange"      # nbgrader's Exchange.root default
SECTION = "FeedbackOnSubmit"
SHOW = ("full", "diagnosis", "visible")
DEFAULTS = {"show": "full", "limit": "5/day", "after_due_date": False}


@dataclass(frozen=True)
class WatchSettings:
    course: Course
    assignment: str
    root: Path                  # the exchange root
    show: str
    limit: Limit
    after_due_date: bool

    @property
    def exchange(self) -> Path:
        return self.root / self.course.course_id

    @property
    def inbound(self) -> Path:
        return self.exchange / "inbound"

    @property
    def feedback(self) -> Path:
        return self.exchange / "feedback"

    @property
    def state(self) -> Path:
        return self.course.root / STATE_FOLDER


def watch_settings(course: Course, assignment: str) -> WatchSettings:
    """The settings, or one ValueError naming every setting that is wrong and what to write instead."""
    config = course.root / CONFIG
    problems = [f"c.{name} in {config} is computed, not a plain value, and the grader reads the config "
                "without running it: write it as a plain literal" for name in course.unreadable
                if name.startswith((f"{SECTION}.", "Exchange.root", "CourseDirectory.course_id"))]
    if course.setting("CourseDirectory", "course_id") is None:
        problems.append(f"{config} sets no c.CourseDirectory.course_id: nbgrader's exchange needs one "
                        "(the folder under the exchange root), e.g. c.CourseDirectory.course_id = \"ml101\"")
    ours = course.settings.get(SECTION, {})
    problems += [f"c.{SECTION}.{name} in {config} is not a setting of feedback on submit (there are "
                 f"{', '.join(DEFAULTS)})" for name in ours if name not in DEFAULTS]
    values = {**DEFAULTS, **{k: v for k, v in ours.items() if k in DEFAULTS}}
    if values["show"] not in SHOW:
        problems.append(f"c.{SECTION}.show is {values['show']!r}: use one of {', '.join(map(repr, SHOW))}")
    if not isinstance(values["after_due_date"], bool):
        problems.append(f"c.{SECTION}.after_due_date is {values['after_due_date']!r}: use True or False")
    limit = None
    try:
        limit = parse_limit(values["limit"])
    except ValueError as exc:
        problems.append(str(exc))
    root = course.setting("Exchange", "root", DEFAULT_ROOT)
    if not isinstance(root, str) or not root:
        problems.append(f"c.Exchange.root in {config} is {root!r}: give the exchange folder as a string")
    if problems:
        raise ValueError("; ".join(problems))
    return WatchSettings(course, assignment, (course.root / root).resolve(), values["show"], limit,
                         values["after_due_date"])
