"""The typed contracts at the package's boundaries: each message is one frozen type with one ``to_dict``
and one ``from_dict`` (a sandbox layer's status: one ``str`` and one ``parse``, the text records show), and what
one writes the other reads back the same."""
from __future__ import annotations

import json

import pytest

from autograder.journal.events import EVENTS, Graded, Note, Published, Received, Started, Stopped, parse_event

JOURNAL_EVENTS = [
    Received("ada+ch04+1", student="ada", assignment="ch04", secret="d1", received=1.5, at=2.0),
    Started("ada+ch04+1", at=3.0),
    Stopped("ada+ch04+1", at=4.0),
    Graded("ada+ch04+1", student="ada", record="ab.json", total=27.5, max=28, diagnoses=("no-scaling",),
           review=True, seconds=0.25, at=5.0),
    Published("ada+ch04+1", kind="feedback", pages=3, kept=1, at=6.0, show="full"),
    Published("ada+ch04+1", kind="limit", pages=4, at=6.0, next=99.0),
    Note("ada\udcff+x", note="not graded", at=7.0),
]


@pytest.mark.parametrize("event", JOURNAL_EVENTS, ids=lambda e: e.EVENT)
def test_a_journal_event_reads_back_as_it_was_written(event):
    line = json.dumps(event.to_dict(), ensure_ascii=True, allow_nan=False)
    assert type(event).from_dict(event.to_dict()) == event
    assert parse_event(json.loads(line)) == event
    assert next(iter(event.to_dict())) == "event" and EVENTS[event.to_dict()["event"]] is type(event)


def test_a_journal_line_is_the_one_the_service_wrote_before():
    """The same keys, in the same order, as the dicts the service built (an optional field only when set)."""
    assert list(Published("e", kind="feedback", pages=4, at=1.0).to_dict()) == [
        "event", "entry", "kind", "pages", "kept", "at"]
    assert list(Published("e", kind="limit", next=2.0).to_dict())[-1] == "next"
    assert list(JOURNAL_EVENTS[3].to_dict()) == ["event", "entry", "student", "record", "total", "max",
                                                 "diagnoses", "review", "seconds", "at"]
    assert JOURNAL_EVENTS[3].to_dict()["diagnoses"] == ["no-scaling"]
    backlog = Graded("e", student="ada", charged=False)                 # graded at start, not charged
    assert list(backlog.to_dict())[-1] == "charged" and parse_event(backlog.to_dict()) == backlog


def test_a_damaged_journal_line_is_no_event_or_reads_as_the_defaults():
    assert parse_event({"event": "graded", "entry": 5}) is None           # an entry that is not a name
    assert parse_event({"event": "exploded", "entry": "e"}) is None
    assert parse_event(["event", "graded"]) is None
    odd = parse_event({"event": "graded", "entry": "e", "at": "soon", "diagnoses": "abc", "total": True})
    assert odd == Graded("e", at=0, diagnoses=(), total=0)
    assert parse_event({"event": "received", "entry": "e"}) == Received("e")     # an older, shorter line


# --- the gradebook writer's pipe ----------------------------------------------------------------
from autograder.gradebook.messages import Answer, Scores  # noqa: E402


def test_a_score_message_reads_back_as_it_was_sent():
    sent = Scores("ada\u202e", {"ex1_softmax": 3.0, "ex2_mask": 0.0}, {"ex1": ("why", "and why")}, "2026-11-02 11:00:00", False)
    assert Scores.from_dict(json.loads(json.dumps(sent.to_dict()))) == sent
    assert list(sent.to_dict()) == ["student", "submitted", "fresh", "earned", "flags"]   # the line sent before
    older = Scores.from_dict({"student": "bob", "earned": {"ex1_softmax": 1}, "flags": {"ex1": []}})
    assert older == Scores("bob", {"ex1_softmax": 1.0})                  # no reasons: no flag; fresh by default


def test_an_answer_reads_back_as_it_was_written():
    full = Answer(3600.0, "2026-11-02 11:00:00", {"ex1": 1.5}, "2026-11-02 12:00:00", {"ex1_attention": 3.0},
                  (("ex1", "ex1_solution", "close"),), False, refused="its id is longer than the gradebook takes", differed={"ex2_causal": 0.0})
    lateness_only = Answer(0.0, "", {"ex1": 0.0}, "")
    for answer in (full, lateness_only):
        assert Answer.from_dict(json.loads(json.dumps(answer.to_dict()))) == answer
    assert "manual" not in lateness_only.to_dict() and lateness_only.manual is None      # said nothing of it
    assert Answer.from_dict({"manual": {}, "comments": [["a", "b"]]}).comments == ()      # a comment needs 3 parts


# --- intake's integrity events ------------------------------------------------------------------
from types import SimpleNamespace  # noqa: E402

from autograder.intake import integrity, submission  # noqa: E402
from autograder.intake.files import Link  # noqa: E402
from autograder.intake.model import Intake, IntegrityEvent  # noqa: E402
from autograder.intake.names import Found  # noqa: E402
from autograder.intake.take import Taken  # noqa: E402
from autograder.records import Finding  # noqa: E402


def test_an_integrity_event_lands_in_the_intake_as_its_fields_say():
    intake = Intake()
    intake.flag(IntegrityEvent("copied", "from bob", withholds=True))
    intake.flag(IntegrityEvent("odd", suspicion=False))
    assert intake.findings == [Finding("copied", private="from bob", accuses=True), Finding("odd")]   # only a
    assert intake.problems == ["copied", "odd"] and intake.needs_review                    # suspicion accuses


@pytest.mark.parametrize("withholds", [True, False])
def test_whether_a_copied_notebook_is_graded_is_the_events_withholds(monkeypatch, withholds):
    event = IntegrityEvent("Integrity: a hard link", "classmate bob", withholds=withholds)
    monkeypatch.setattr(submission, "copy_event", lambda st, what, ctx: event)
    intake = Intake()
    assert submission._readable(Found("ex1", "ex1.ipynb"), Taken(b"{}", object()), None, intake) is not withholds
    assert intake.findings == [Finding(event.message, private=event.private, accuses=True)]


def test_each_integrity_check_returns_one_event_type(tmp_path):
    notebooks = SimpleNamespace(source_digests={"d1": "ex1"}, instructor_files={(1, 2)})
    ctx = integrity.Context(tmp_path, "a", "kim", notebooks)
    classmate = Link(tmp_path / "submitted" / "kim" / "a", "ex1.ipynb", "../../bob/a/ex1.ipynb")
    elsewhere = Link(tmp_path / "submitted" / "kim" / "a", "ex1.ipynb", "/etc/passwd")
    events = [integrity.link_event(classmate, "ex1.ipynb", ctx), integrity.link_event(elsewhere, "ex1.ipynb", ctx),
              integrity.source_event("d1", "ex1.ipynb", ctx),
              integrity.copy_event(SimpleNamespace(st_dev=1, st_ino=2, st_nlink=1), "ex1.ipynb", ctx)]
    assert all(type(e) is IntegrityEvent and e.withholds for e in events)
    assert [e.suspicion for e in events] == [True, False, True, True]     # a link out of the course accuses no one
    assert events[0].private == "ex1.ipynb links to classmate 'bob''s submission." and not events[1].private
    assert integrity.source_event("d2", "ex1.ipynb", ctx) is None


# --- a sandbox layer's status -------------------------------------------------------------------
from autograder.sandbox import layers, namespaces  # noqa: E402
from autograder.sandbox.limits import Limits  # noqa: E402
from autograder.sandbox.status import (SANDBOX_LAYERS, LayerStatus, State, applied, available,  # noqa: E402
                                       doctor_lines, missing)

HIDDEN_BY_LANDLOCK = ("no unprivileged user namespaces here; solutions, autograder and the course files are hidden "
                      "only by Landlock's allowlist (install into a virtual environment outside /usr)")
# each state, written as records, the terminal and doctor showed it before the type
SHOWN = {"applied": applied(), "applied (ABI 7)": applied("ABI 7"),
         "applied (uid 0 kept: Python is in a private directory; all capabilities dropped)":
             applied("uid 0 kept: Python is in a private directory; all capabilities dropped"),
         "kept (not root)": LayerStatus(State.KEPT, "not root"),
         "kept (not root); the capabilities of its user namespace dropped":
             LayerStatus(State.KEPT, "not root", "the capabilities of its user namespace dropped"),
         "available": available(), "available (v1)": available("v1"), "missing": missing(),
         "missing: no user namespace": missing("no user namespace"), f"missing: {HIDDEN_BY_LANDLOCK}":
             missing(HIDDEN_BY_LANDLOCK), "not needed: root": LayerStatus(State.NOT_NEEDED, "root")}


@pytest.mark.parametrize("text", SHOWN)
def test_a_layer_status_is_written_as_before_and_reads_back(text):
    assert str(SHOWN[text]) == text and LayerStatus.parse(text) == SHOWN[text]


def test_text_that_is_no_layer_status_is_refused():
    for text in ("applies", "applied(ABI 7)", "missing no user namespace", ""):
        with pytest.raises(ValueError, match="not a sandbox layer's status"):
            LayerStatus.parse(text)
    with pytest.raises(ValueError, match="its reason only"):
        LayerStatus(State.MISSING, "why", "and more")          # "missing: why; and more" would read back as one


def test_doctor_names_each_layer_once_with_the_records_name():
    assert list(layers.detect()) == list(SANDBOX_LAYERS)      # every layer, in doctor's order
    lines = doctor_lines({"landlock": missing("kernel without Landlock"), "cgroup": available("v2")})
    assert lines == {"landlock": "missing: kernel without Landlock", "cgroup pids and memory": "available (v2)"}


def test_a_missing_user_namespace_makes_the_namespaces_and_mounts_skip(monkeypatch, tmp_path):
    monkeypatch.setattr(namespaces, "enter_user_namespace", lambda: missing("not for the test"))
    monkeypatch.setattr(namespaces, "enter", lambda mark=None: pytest.fail("entered without a user namespace"))
    status = {}
    assert layers._isolate_files(status, str(tmp_path), Limits(), 1, False) == (str(tmp_path), False)
    assert {str(status[n]) for n in [*namespaces.NAMESPACES, "PID namespace"]} == {"missing: no user namespace"}
    assert str(status["this package hidden"]) == "missing: no mount namespace (hidden only by Landlock's allowlist)"
    assert "python for any uid" not in status and "private /tmp" not in status


def test_an_applied_status_with_a_detail_counts_as_applied(monkeypatch, tmp_path):
    """The state decides, whatever the text: an applied user namespace with a detail still lets the others
    be entered and its capabilities be dropped (a match on the text "applied" said no)."""
    entered, dropped = [], []
    monkeypatch.setattr(namespaces, "enter_user_namespace", lambda: applied("mapped for the test"))
    monkeypatch.setattr(namespaces, "enter", lambda mark=None: entered.append(1) or {"mount namespace": missing("x")})
    monkeypatch.setattr(layers, "drop_capabilities", lambda: dropped.append(1))
    status = {}
    layers._isolate_files(status, str(tmp_path), Limits(), 1, False)
    assert entered and str(layers._drop_namespace_capabilities(status)).endswith("user namespace dropped") and dropped
    assert str(layers._drop_namespace_capabilities({"user namespace": missing("no")})) == "kept (not root)"
    assert layers._hidden_by_mount(available("in a user namespace")) == available("in a user namespace")
    assert layers._hidden_by_mount(missing("no unprivileged user namespaces here")) == missing(HIDDEN_BY_LANDLOCK)


def test_a_cell_re_weighted_to_points_its_weights_do_not_divide_sums_to_its_points():
    """ex2_causal's checks weigh 2, 1, 1, 1, 1; re-weighted to 8 points they are worth 8/3 and 4/3 each, and a
    sum rounded after every check drifted to 7.999999 (the gradebook 25.999999, grades.csv 26)."""
    from autograder.grading.rubric import RUBRIC, scaled
    from autograder.records import CheckResult, Record
    checks = [CheckResult("ex2_causal", item.name, item.category, item.points, item.points, True, "ok")
              for item in RUBRIC["ex2_causal"]]
    record = Record("ada", scaled(checks, {"ex2_causal": 8}))
    assert record.cells["ex2_causal"].earned == record.cells["ex2_causal"].max == 8
    assert record.total == record.max_total == 8 and record.notebooks["ex2_causal_mask"].earned == 8
    assert sum(s.earned for s in record.categories.values()) == 8
# --- a record's findings ------------------------------------------------------------------------
from autograder.records import Record  # noqa: E402

FINDINGS = [Finding("ex3_memory.ipynb is missing.", "ex3_memory"),
            Finding("Integrity: ex1_attention.ipynb is the same notebook as a classmate's.", "ex1_attention",
                    "ex1_attention.ipynb: the same notebook as classmate(s) 'b\u202eob'.", accuses=True),
            Finding("The submission folder could not be listed (Permission denied); nothing was graded.")]


@pytest.mark.parametrize("finding", FINDINGS, ids=["damage", "suspicion", "whole submission"])
def test_a_finding_reads_back_as_it_was_written(finding):
    line = json.dumps(finding.to_dict(), ensure_ascii=True, allow_nan=False)
    assert Finding.from_dict(json.loads(line)) == finding
    assert list(finding.to_dict()) == ["message", "notebook", "private", "accuses"]


def test_a_records_findings_read_back_as_they_were_written():
    record = Record("ada", (), assignment="ch04_attention", needs_review=True, findings=FINDINGS)
    again = Record.from_json(record.to_json())
    assert again == record and again.findings == tuple(FINDINGS)
    assert json.loads(record.to_json())["integrity"] == [f.message for f in FINDINGS]     # for a reader, derived


def test_a_damaged_finding_is_refused_and_its_record_is_not_read(tmp_path):
    from autograder.records import load_record, record_path
    with pytest.raises(TypeError, match="are texts"):
        Finding.from_dict({"message": ["not", "a", "text"], "accuses": True})
    assert Finding.from_dict({"message": "m", "accuses": "yes"}).accuses is False        # only true accuses
    data = json.loads(Record("ada", (), findings=FINDINGS).to_json())
    data["findings"][1]["private"] = 5
    record_path(tmp_path, "ada").parent.mkdir()
    record_path(tmp_path, "ada").write_text(json.dumps(data))
    assert load_record(tmp_path, "ada") is None                   # regraded, as any record that cannot be read
