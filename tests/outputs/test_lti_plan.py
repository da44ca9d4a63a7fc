"""The LTI sync's decisions without an LMS: the journal's round trip and its refusals, what each student's
score becomes (post, unchanged, recorded, changed), how a killed sync's pending scores settle, how the
roster is matched (never guessed), and which next-page links are followed."""
from __future__ import annotations

import json

import pytest

from autograder.gradebook.totals import Total
from autograder.lti.journal import Journal, Posted, read_journal, write_journal
from autograder.lti.plan import CHANGED, POST, RECORDED, UNCHANGED, decide, desired_score, lms_scores, settle
from autograder.lti.roster import Member, match_students, read_members
from autograder.lti.session import LtiError, next_page

STAMP = "2026-05-01T10:00:00.000000+00:00"
FRESH = Journal("ch04_attention", "https://lms", "client", "https://lms/lineitems")


def posted(score, grading="FullyGraded", activity="Completed", student="ada") -> Posted:
    return Posted(student, score, 28.0, grading, activity, STAMP)


def test_the_journal_round_trips_and_is_ascii(tmp_path):
    journal = FRESH.with_changes(lineitem="https://lms/lineitems/1",
                                 posted={"u-\u202eada": posted(25.5, student="=cmd()\u202e")},
                                 pending={"u-bob": posted(None, "PendingManual", "Submitted", "bob")})
    path = tmp_path / "lti" / "j.json"
    write_journal(path, journal)
    assert path.read_bytes().isascii()
    assert read_journal(path, FRESH) == journal
    assert Journal.from_dict(json.loads(json.dumps(journal.to_dict()))) == journal


def test_a_damaged_journal_or_one_of_another_course_is_refused_in_one_line(tmp_path):
    path = tmp_path / "j.json"
    assert read_journal(path, FRESH) == FRESH                 # none yet: a fresh one
    path.write_text('{"format": 1, "assignment": "ch04_attention"')
    with pytest.raises(LtiError, match=r"^the sync journal .* is damaged \(.*\): move it away and run again"):
        read_journal(path, FRESH)
    write_journal(path, FRESH.with_changes(posted={"u": posted(1.0)}))
    path.write_text(path.read_text().replace('"score": 1.0', '"score": NaN'))
    with pytest.raises(LtiError, match="is damaged"):
        read_journal(path, FRESH)
    write_journal(path, FRESH.with_changes(lineitems_url="https://other/lineitems"))
    with pytest.raises(LtiError, match="was written for another LMS course or assignment"):
        read_journal(path, FRESH)


ADA = Member("u-ada", "Ada", learner=True)


def kind(total: Total, journal: Journal, in_lms: dict, force=False) -> str:
    [decision] = decide([(total, ADA)], journal, in_lms, timestamp=STAMP, force=force)
    return decision.kind


@pytest.mark.parametrize("last, in_lms, score, expected", [
    (None, None, 25.5, POST),                  # never posted: post
    (25.5, 25.5 / 28, 25.5, UNCHANGED),        # posted and still there: nothing to send
    (25.5, 25.5 / 28, 20.0, POST),             # a regrade: replace it
    (25.5, 20.0 / 28, 25.5, CHANGED),          # a person changed it in the LMS: kept
    (25.5, None, 25.5, CHANGED),               # a person cleared it in the LMS: kept
    (None, 25.5 / 28, 25.5, RECORDED),         # already in the LMS (an earlier journal lost): noted, not sent
    (None, 10.0 / 28, 25.5, CHANGED),          # a score this tool never posted: kept
])
def test_each_student_s_decision(last, in_lms, score, expected):
    journal = FRESH.with_changes(posted={"u-ada": posted(last)} if last is not None else {})
    assert kind(Total("ada", score, 28.0), journal, {"u-ada": in_lms} if in_lms is not None else {}) == expected


def test_force_posts_over_a_change_and_review_is_pending_without_a_score():
    journal = FRESH.with_changes(posted={"u-ada": posted(25.5)})
    assert kind(Total("ada", 25.5, 28.0), journal, {"u-ada": 0.5}, force=True) == POST
    pending = desired_score(Total("ada", 25.5, 28.0, needs_manual_grade=True), STAMP)
    assert (pending.score, pending.grading, pending.activity) == (None, "PendingManual", "Submitted")
    absent = desired_score(Total("eve", 0.0, 28.0, submitted=False), STAMP)
    assert (absent.score, absent.grading, absent.activity) == (0.0, "FullyGraded", "Initialized")
    pending_posted = FRESH.with_changes(posted={"u-ada": pending})
    assert kind(Total("ada", 25.5, 28.0, needs_manual_grade=True), pending_posted, {}) == UNCHANGED
    assert kind(Total("ada", 25.5, 28.0, needs_manual_grade=True), pending_posted, {"u-ada": 0.9}) == CHANGED


def test_a_killed_sync_s_pending_scores_settle_from_the_lms_s_results():
    """A pending score the LMS holds was sent (posted); one it does not hold was not (dropped, decided again)."""
    journal = FRESH.with_changes(pending={"u-ada": posted(25.5), "u-bob": posted(20.0, student="bob"),
                                          "u-cy": posted(None, "PendingManual", "Submitted", "cy")})
    settled, count = settle(journal, lms_scores([{"userId": "u-ada", "resultScore": 25.5, "resultMaximum": 28},
                                                 {"userId": "u-bob", "resultScore": 3}], 28.0))
    assert count == 1 and list(settled.posted) == ["u-ada"] and not settled.pending


def test_lms_scores_read_each_result_as_a_fraction_of_its_maximum():
    rows = [{"userId": "a", "resultScore": 5, "resultMaximum": 10}, {"userId": 7, "resultScore": 14},
            {"userId": "n"}, {"userId": True, "resultScore": 1}, {"resultScore": 2}]
    assert lms_scores(rows, 28.0) == {"a": 0.5, "7": 0.5, "n": None}


def member(user_id, **fields) -> dict:
    return {"user_id": user_id, "roles": ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"], **fields}


def test_the_roster_is_matched_by_one_key_and_never_guessed():
    rows = [member("1", ext_user_username="ada", email="Ada@X.edu", lis_person_sourcedid="S1"),
            member("2", ext_user_username="bob", email="bob@x.edu"), member("3", ext_user_username="bob"),
            member("4", ext_user_username="cy", status="Inactive"), member("5", ext_user_username="ann"),
            {"user_id": "6", "roles": ["Instructor"], "ext_user_username": "dan"}, {"name": "no id"},
            member("x" * 600, ext_user_username="eve"), member("7", ext_user_username="fay" * 200)]
    members, unreadable = read_members(rows, "ext_user_username")
    assert unreadable == 2                                 # no id, and an id too long to be whole
    totals = [Total(s, 1.0, 28.0, e) for s, e in [("ada", "ada@x.edu"), ("bob", ""), ("cy", ""), ("\u0430nn", ""),
                                                  ("dan", ""), ("gil", "g@x"), ("hal", "g@x")]]
    by_login = match_students(totals, members, match="login")
    assert [(t.student, m.user_id) for t, m in by_login.pairs] == [("ada", "1")]
    assert [(t.student, why) for t, why in by_login.ambiguous] == [("bob", "2 LMS learners share the login")]
    assert dict((t.student, why) for t, why in by_login.unmatched) == {
        "cy": "the LMS learner is Inactive in the course", "\u0430nn": "no LMS learner has the login",
        "dan": "no LMS learner has the login", "gil": "no LMS learner has the login",
        "hal": "no LMS learner has the login"}
    assert [m.user_id for m in by_login.lms_only] == ["2", "3", "5", "7"]
    by_email = match_students(totals, members, match="email")
    assert [(t.student, m.user_id) for t, m in by_email.pairs] == [("ada", "1")]
    assert [(t.student, why) for t, why in by_email.ambiguous] == [
        ("gil", "2 students of the gradebook share the e-mail"),
        ("hal", "2 students of the gradebook share the e-mail")]
    assert ("bob", "no e-mail in the gradebook") in [(t.student, w) for t, w in by_email.unmatched]
    assert [(t.student, m.user_id) for t, m in match_students(
        [Total("S1", 1.0, 28.0)], members, match="sis").pairs] == [("S1", "1")]


def test_a_roster_without_the_login_field_stops_in_one_line():
    members, _ = read_members([member("1", email="a@x")], "ext_user_username")
    with pytest.raises(LtiError, match="no learner of the LMS's roster has the field 'ext_user_username'"):
        match_students([Total("ada", 1.0, 28.0)], members, match="login", login_field="ext_user_username")


FIRST = "https://lms.example.edu/api/lti/courses/1/memberships?limit=500"


@pytest.mark.parametrize("link, expected", [
    ('<https://lms.example.edu/api/lti/courses/1/memberships?page=2>; rel="next"',
     "https://lms.example.edu/api/lti/courses/1/memberships?page=2"),
    ("<https://lms.example.edu/m?page=2>; rel=next", "https://lms.example.edu/m?page=2"),   # unquoted (RFC 8288)
    ('<https://lms.example.edu/m?page=1>; rel="prev", <https://lms.example.edu/m?page=3>; rel="next"',
     "https://lms.example.edu/m?page=3"),
    ('<https://lms.example.edu/m?page=1>; rel="first"', None), ("", None),
])
def test_the_next_page_is_read_from_the_link_header(link, expected):
    assert next_page({"Link": link} if link else {}, FIRST, FIRST) == expected


def test_a_next_page_on_another_server_is_refused():
    with pytest.raises(LtiError, match="is on another server .* refused, the token would go with it"):
        next_page({"link": '<https://evil.example/steal>; rel="next"'}, FIRST, FIRST)
    with pytest.raises(LtiError, match="another server"):
        next_page({"link": '<http://lms.example.edu/m?page=2>; rel="next"'}, FIRST, FIRST)    # https -> http
