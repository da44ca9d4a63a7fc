"""The LMS's roster (NRPS members) and which of its users each gradebook student is.

A student is matched by one key (``match``): the login (the member field ``login_field``, against
nbgrader's student id), the SIS id (``lis_person_sourcedid``, against the student id) or the e-mail
address (against nbgrader's student e-mail, case folded). A key held by two LMS learners, or by two
students of the gradebook, places nobody: each student it concerns is listed as ambiguous. A student no
active learner holds the key of is listed as unmatched. Nothing is guessed: no fuzzy names, no fallback
key. Members are the LMS's data: every field is bounded and checked for its type here, once.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..gradebook.totals import Total
from .session import LtiError

MAX_FIELD = 512              # characters of a member's field: a longer name is cut, a longer id or key is none
ACTIVE = ("", "Active")       # NRPS: a member with no status is active


@dataclass(frozen=True)
class Member:
    user_id: str              # the LMS's LTI user id: where a score is posted
    name: str = ""
    email: str = ""
    sis: str = ""
    login: str = ""
    learner: bool = False
    status: str = ""


@dataclass(frozen=True)
class Matching:
    pairs: tuple[tuple[Total, Member], ...]
    unmatched: tuple[tuple[Total, str], ...]      # the student, why no LMS user is theirs
    ambiguous: tuple[tuple[Total, str], ...]      # the student, who shares the key
    lms_only: tuple[Member, ...]                  # active learners of the LMS no student of the gradebook is
    unreadable: int = 0                           # members without a user id (skipped)


def read_members(rows: list[dict], login_field: str) -> tuple[list[Member], int]:
    """Typed members of the NRPS answer, and how many rows had no usable user id."""
    members, bad = [], 0
    for row in rows:
        user_id = _key_field(row.get("user_id"))
        if not user_id:
            bad += 1
            continue
        roles = row.get("roles") if isinstance(row.get("roles"), list) else []
        members.append(Member(user_id, _name_field(row.get("name")), _key_field(row.get("email")),
                              _key_field(row.get("lis_person_sourcedid")), _key_field(row.get(login_field)),
                              any(_learner(r) for r in roles[:64] if isinstance(r, str)),
                              _key_field(row.get("status"))))
    return members, bad


def _name_field(value) -> str:
    """A name, for showing: cut to MAX_FIELD characters."""
    return value.strip()[:MAX_FIELD] if isinstance(value, str) else ""


def _key_field(value) -> str:
    """An id or a key, whole or not at all: a cut one could be another user's."""
    return value.strip() if isinstance(value, str) and len(value) <= MAX_FIELD else ""


def _learner(role: str) -> bool:
    """A context Learner: ``Learner`` or a vocabulary URI ending in ``#Learner`` (LTI 1.3 section A.2)."""
    return role == "Learner" or role.endswith("#Learner")


def _key(value: str, match: str) -> str:
    return value.strip().casefold() if match == "email" else value.strip()


def member_key(member: Member, match: str) -> str:
    return _key({"login": member.login, "sis": member.sis, "email": member.email}[match], match)


def student_key(total: Total, match: str) -> str:
    return _key(total.email if match == "email" else total.student, match)


def match_students(totals: list[Total], members: list[Member], *, match: str, login_field: str = "",
                   unreadable: int = 0) -> Matching:
    """Each gradebook student's LMS user, by ``match``; the rest listed with the reason."""
    learners = [m for m in members if m.learner]
    if match == "login" and learners and not any(m.login for m in learners):
        raise LtiError(f"no learner of the LMS's roster has the field {login_field!r} (the login): set login_field "
                       "in the LTI registration file to the field your LMS sends, or match by 'sis' or 'email'")
    by_key: dict[str, list[Member]] = {}
    for member in learners:
        if (k := member_key(member, match)):
            by_key.setdefault(k, []).append(member)
    keys: dict[str, list[Total]] = {}
    for total in totals:
        keys.setdefault(student_key(total, match), []).append(total)
    pairs, unmatched, ambiguous = [], [], []
    for total in totals:
        _place(total, student_key(total, match), by_key, keys, match, pairs, unmatched, ambiguous)
    placed = {m.user_id for _, m in pairs}
    lms_only = tuple(m for m in learners if m.user_id not in placed and m.status in ACTIVE)
    return Matching(tuple(pairs), tuple(unmatched), tuple(ambiguous), lms_only, unreadable)


def _place(total, key, by_key, keys, match, pairs, unmatched, ambiguous) -> None:
    what = {"login": "login", "sis": "SIS id", "email": "e-mail"}[match]
    if not key:
        unmatched.append((total, f"no {what} in the gradebook"))
    elif len(keys[key]) > 1:
        ambiguous.append((total, f"{len(keys[key])} students of the gradebook share the {what}"))
    elif len(by_key.get(key, ())) > 1:
        ambiguous.append((total, f"{len(by_key[key])} LMS learners share the {what}"))
    elif key not in by_key:
        unmatched.append((total, f"no LMS learner has the {what}"))
    elif by_key[key][0].status not in ACTIVE:
        unmatched.append((total, f"the LMS learner is {by_key[key][0].status} in the course"))
    else:
        pairs.append((total, by_key[key][0]))
