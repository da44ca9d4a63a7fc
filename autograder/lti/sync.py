"""``python -m autograder lti sync``: the assignment's totals into the LMS by LTI Advantage.

The roster (NRPS) is read and matched to the gradebook's students; the assignment's line item is found
(the journal's, else the one this tool made for it) or created once; the LMS's results are read back, so
that a pending score a killed sync already sent is not sent again and a score a person changed in the LMS
is named and kept; then each score that must change is posted (AGS), the journal written before each group
of scores is sent and after. ``lti check`` tries the registration without posting anything.
"""
from __future__ import annotations

import fcntl
import math
import os
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..course.settings import choose_assignment, resolve_db_url
from ..course.view import course_settings
from ..durable import synced_at_end
from ..gradebook.timestamps import iso_time
from ..gradebook.totals import assignment_totals
from .client import LmsClient, public_jwk, require_library
from .config import CONFIG_NAME, LtiConfig, read_config
from .journal import Journal, journal_path, read_journal, write_journal
from .plan import POST, RECORDED, Decision, decide, lms_scores, settle
from .roster import Matching, match_students, read_members
from .session import LtiError
from .report import write_report

TAG = "attention-course"            # the line items this tool made (with resourceId = the assignment)
CHUNKS = 20                          # journal writes per sync at most about twice this


@dataclass(frozen=True)
class SyncResult:
    assignment: str
    lineitem: str
    created: bool
    decisions: tuple[Decision, ...]
    matching: Matching
    settled: int                     # pending scores of a killed sync found in the LMS (not sent again)
    journal: Path
    report: Path | None
    notes: tuple[str, ...] = ()
    dry_run: bool = False
    tokens: int = 0

    def of(self, kind: str) -> list[Decision]:
        return [d for d in self.decisions if d.kind == kind]


def sync_grades(*, course=".", assignment: str | None = None, config=None, match: str | None = None,
                force: bool = False, dry_run: bool = False, out=None, gradebook_url: str | None = None,
                timeout: float = 30.0) -> SyncResult:
    """Post ``assignment``'s totals (as ``nbgrader export`` has them) to the LMS course that ``config`` (default
    ``COURSE/lti.toml``) registers; the journal and the report go to ``OUT/lti/`` (default ``COURSE/grading``).
    ``force``: overwrite scores changed in the LMS. ``dry_run``: decide and report, post nothing."""
    require_library()
    settings = course_settings(course)
    assignment = choose_assignment(settings.root, assignment)
    lti = read_config(config or settings.root / CONFIG_NAME, match=match)
    db_url = resolve_db_url(gradebook_url, Path.cwd()) if gradebook_url else settings.db_url
    totals = assignment_totals(db_url, settings.course_id, assignment)
    if not totals:
        raise ValueError(f"the gradebook holds no student for {assignment}: nothing to send to the LMS")
    maximum = totals[0].max_score
    if maximum <= 0:
        raise ValueError(f"the gradebook's {assignment} is out of {maximum:g} points: an LMS column needs a "
                         "positive maximum (is the assignment graded?)")
    out = Path(out).resolve() if out else settings.root / "grading"
    client = LmsClient(lti, timeout=timeout)
    members, unreadable = read_members(client.members(), lti.login_field)
    matching = match_students(totals, members, match=lti.match, login_field=lti.login_field, unreadable=unreadable)
    path = journal_path(out, assignment, lti.issuer, lti.client_id, lti.lineitems_url)
    with _locked(path):
        return _sync(client, lti, path, assignment, maximum, matching, force=force, dry_run=dry_run)


def _sync(client, lti: LtiConfig, path: Path, assignment: str, maximum: float, matching: Matching, *,
          force: bool, dry_run: bool) -> SyncResult:
    fresh = Journal(assignment, lti.issuer, lti.client_id, lti.lineitems_url)
    journal = read_journal(path, fresh)
    lineitem, created, journal, notes = _lineitem(client, journal, fresh, assignment, maximum, force, dry_run)
    in_lms = lms_scores(client.results(lineitem["id"]), _maximum(lineitem, maximum)) if not created else {}
    journal, settled = settle(journal, in_lms)
    stamp = iso_time(datetime.now(timezone.utc))
    decisions = decide(matching.pairs, journal, in_lms, timestamp=stamp, force=force)
    if not dry_run:
        with synced_at_end():
            journal = _record(path, journal, decisions)
            _post(client, path, journal, lineitem["id"], [d for d in decisions if d.kind == POST])
    result = SyncResult(assignment, lineitem["id"], created, tuple(decisions), matching, settled, path, None,
                        tuple(notes), dry_run, client.tokens)
    return result if dry_run else write_report(result)


def _maximum(lineitem: dict, fallback: float) -> float:
    value = lineitem.get("scoreMaximum")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else fallback


def _lineitem(client, journal: Journal, fresh: Journal, assignment: str, maximum: float, force: bool, dry_run: bool):
    """The assignment's line item: the journal's, else the one this tool made, else a new one (once)."""
    ours = [i for i in client.lineitems(assignment) if isinstance(i.get("id"), str)
            and i.get("resourceId") == assignment and i.get("tag") == TAG]
    notes = []
    if journal.lineitem and not any(i["id"] == journal.lineitem for i in ours):
        if not force:
            raise LtiError(f"the LMS column {journal.lineitem} that the last sync posted {assignment}'s scores to is "
                           "gone (deleted in the LMS?): run with --force to make a new one and post every score again")
        journal = fresh
    if journal.lineitem:
        item = next(i for i in ours if i["id"] == journal.lineitem)
    elif len(ours) > 1:
        raise LtiError(f"the LMS has {len(ours)} columns for {assignment} made by this tool "
                       f"({', '.join(i['id'] for i in ours[:5])}): delete all but one in the LMS, then run again")
    elif ours:
        item = ours[0]
    elif dry_run:
        return {"id": "(a new column)", "scoreMaximum": maximum}, True, journal, notes
    else:
        item = client.create_lineitem(label=assignment, maximum=maximum, resource_id=assignment, tag=TAG)
        return item, True, journal.with_changes(lineitem=item["id"]), notes
    if _maximum(item, maximum) != maximum:
        notes.append(f"the LMS column is out of {_maximum(item, maximum):g} points and {assignment} out of {maximum:g}:"
                     f" scores are posted out of {maximum:g} and the LMS scales them")
    return item, False, journal.with_changes(lineitem=item["id"]), notes


def _record(path: Path, journal: Journal, decisions: list[Decision]) -> Journal:
    """The journal with the LMS's scores that already are the gradebook's (``recorded``), written."""
    found = {d.user_id: d.desired for d in decisions if d.kind == RECORDED}
    journal = journal.with_changes(posted={**journal.posted, **found})
    write_journal(path, journal)
    return journal


def _post(client, path: Path, journal: Journal, lineitem: str, todo: list[Decision]) -> Journal:
    """Each score in groups: the group written as pending, sent, then written as posted. A kill between
    leaves the group pending, which the next sync settles from the LMS's results."""
    size = max(1, min(200, math.ceil(len(todo) / CHUNKS)))
    for start in range(0, len(todo), size):
        group = todo[start:start + size]
        journal = journal.with_changes(pending={d.user_id: d.desired for d in group})
        write_journal(path, journal)
        for decision in group:
            client.post_score(lineitem, _grade(decision))
        journal = journal.with_changes(posted={**journal.posted, **journal.pending}, pending={})
        write_journal(path, journal)
    return journal


def _grade(decision: Decision):
    from pylti1p3.grade import Grade
    want = decision.desired
    grade = (Grade().set_user_id(decision.user_id).set_timestamp(want.timestamp)
             .set_activity_progress(want.activity).set_grading_progress(want.grading))
    if want.score is not None:
        grade.set_score_given(want.score).set_score_maximum(want.maximum)
    return grade


@contextmanager
def _locked(path: Path):
    """One sync of a journal at a time (a second is told, not queued)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LtiError(f"another sync of this assignment to this LMS course is running ({path}): wait for it "
                           "to end") from None
        yield
    finally:
        os.close(fd)


@dataclass(frozen=True)
class CheckResult:
    config: LtiConfig
    learners: int
    members: int
    columns: tuple[str, ...]
    jwk: dict


def check_platform(*, course=".", config=None) -> CheckResult:
    """Read the registration, get tokens for every scope the sync needs, read the roster and the line
    items: what ``lti check`` prints. Posts nothing."""
    require_library()
    settings = course_settings(course)
    lti = read_config(config or settings.root / CONFIG_NAME)
    client = LmsClient(lti)
    members, _ = read_members(client.members(), lti.login_field)
    labels = tuple(str(i.get("label", "")) for i in client.lineitems() if i.get("tag") == TAG)
    return CheckResult(lti, sum(m.learner for m in members), len(members), labels, public_jwk(lti.private_key))
