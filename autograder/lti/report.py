"""What a sync did, in words: the lines the command prints (lists cut at 20) and the report it writes beside
the journal (every name). Every name from the LMS or the gradebook is shown by ``inert.shown`` (escapes for
hidden and bidi characters, quoted, so a formula is text) and every line is one line (``inert.one_line``);
the file is replaced whole (``durable.atomic_write``)."""
from __future__ import annotations

from dataclasses import replace

from ..durable import atomic_write
from ..inert import one_line, shown
from .plan import CHANGED, POST, RECORDED, UNCHANGED, Decision

CUT = 20


def summary_lines(result, limit: int | None = CUT) -> list[str]:
    """The sync in lines: what was posted, kept, changed in the LMS, and who could not be placed."""
    posted, pending = [d for d in result.of(POST) if d.desired.score is not None], \
        [d for d in result.of(POST) if d.desired.score is None]
    verb = "would post" if result.dry_run else "posted"
    head = (f"{result.assignment}: LMS column {shown(result.lineitem, 200)} "
            f"({'new' if result.created else 'reused'}); {verb} {len(posted)} score{_s(posted)}, "
            f"{len(pending)} pending review, {len(result.of(UNCHANGED))} unchanged, "
            f"{len(result.of(RECORDED))} already in the LMS")
    lines = [head]
    if result.settled:
        were = "were" if result.settled != 1 else "was"
        lines.append(f"{result.settled} score{_s(result.settled)} sent by the sync that stopped midway {were} "
                     "found in the LMS and not sent again")
    lines += _listed(verb, posted, lambda d: f"{_who(d)} {_points(d.desired.score)}/{_points(d.desired.maximum)}",
                     limit)
    lines += _listed(f"pending review (PendingManual, no score {verb})", pending, _who, limit)
    lines += _listed("changed in the LMS since the last sync, kept (old -> new; --force overwrites)",
                     result.of(CHANGED), lambda d: f"{_who(d)} {' -> '.join(d.change())}", limit)
    lines += _listed("not matched to an LMS learner (no score sent)", result.matching.unmatched,
                     lambda p: f"{shown(p[0].student)} ({p[1]})", limit)
    lines += _listed("ambiguous (no score sent)", result.matching.ambiguous,
                     lambda p: f"{shown(p[0].student)} ({p[1]})", limit)
    lines += _listed("active LMS learners with no student in the gradebook", result.matching.lms_only,
                     lambda m: f"{shown(m.name)} (LMS user {shown(m.user_id)})", limit)
    if result.matching.unreadable:
        lines.append(f"{result.matching.unreadable} member{_s(result.matching.unreadable)} of the LMS roster had no "
                     "user id and were skipped")
    lines += [f"note: {note}" for note in result.notes]
    return [("  " if line.startswith("  ") else "") + one_line(line) for line in lines]


def _listed(what: str, items, show, limit) -> list[str]:
    if not items:
        return []
    if limit is None:                         # the report: one line per name
        return [f"{what} ({len(items)}):", *(f"  {show(i)}" for i in items)]
    shown_items = list(items)[:limit]
    more = f" and {len(items) - len(shown_items)} more" if len(items) > len(shown_items) else ""
    return [f"{what} ({len(items)}): " + "; ".join(show(i) for i in shown_items) + more]


def _who(decision: Decision) -> str:
    return f"{shown(decision.total.student)} (LMS {shown(decision.member.name or decision.member.user_id)})"


def _points(value) -> str:
    return f"{round(float(value), 4):g}"


def _s(items) -> str:
    n = items if isinstance(items, int) else len(items)
    return "" if n == 1 else "s"


def write_report(result):
    """The report beside the journal (every name, one line each); the result with its path."""
    path = result.journal.with_name(result.journal.stem + "-report.txt")
    lines = summary_lines(result, limit=None)
    atomic_write(path, "\n".join(lines) + "\n")
    return replace(result, report=path)


def check_lines(check) -> list[str]:
    """What ``lti check`` found: the registration works, the roster's size, this tool's columns, its key."""
    import json
    config = check.config
    return [one_line(f"registration {config.path}: issuer {shown(config.issuer, 200)}, client id "
                     f"{shown(config.client_id)}: tokens granted for the roster and the grades"),
            one_line(f"roster: {check.members} members, {check.learners} learners (matched by {config.match})"),
            one_line(f"columns made by this tool: {', '.join(map(shown, check.columns)) or 'none yet'}"),
            "the tool's public key, for the LMS's registration (Canvas: Public JWK):",
            json.dumps(check.jwk, sort_keys=True)]
