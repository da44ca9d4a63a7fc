"""The assignment's totals merged into the gradebook an instructor exported from their LMS, for its import.

No LMS credentials: the instructor exports the LMS's own gradebook as CSV, and this writes the same file
with the assignment's column filled (or added), which the LMS imports back.

- **Canvas** (Grades, Export): the columns ``Student, ID, SIS User ID, SIS Login ID, Section`` (an
  ``Integration ID`` may stand before Section), then one column per assignment named ``Name (id)``, then
  read-only totals; the second row is ``Points Possible``. Canvas matches each row by its ``ID`` and
  creates an assignment for a column it does not know.
- **Moodle** (Grade administration, Export, Plain text file; imported by Import, CSV file): the user's
  profile fields (``First name, Last name, ID number, Institution, Department, Email address`` by
  default), then each grade item as ``Type: Name (Real)``. The import maps one column to the users
  (Email address to useremail, say) and a grade column to a grade item (or a new one).

A row is matched to a student of the gradebook by one key (``--match``): the Canvas SIS Login ID or
Moodle Username (``login``, against nbgrader's student id), the SIS User ID or Moodle ID number
(``sis``, against the student id), or the e-mail address (``email``, against nbgrader's student email;
Canvas's SIS Login ID holds it where logins are e-mail addresses). Every row the merge could not fill
and every graded student it could not place is named, never dropped. Every cell that a spreadsheet
would run as a formula is written as text (``inert.csv_cell``); plain numbers (and Moodle's "-", no grade)
stay as they are.
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field

from ..gradebook.totals import Total
from ..inert import csv_cell, shown

CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MATCHES = ("login", "sis", "email")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)")
_MOODLE_ITEM = re.compile(r"^[^:]+: (?P<name>.*) \((Real|Percentage|Letter)\)$")


@dataclass
class Merged:
    """The file the LMS imports (``text``) and what a person must be told about it."""
    text: str
    column: str
    filled: int = 0
    added: bool = False
    notes: list[str] = field(default_factory=list)


class LmsFormatError(ValueError):
    """The file is not the LMS's gradebook export, or the options do not fit it."""


def merge_canvas(text: str, totals: list[Total], *, column: str, match: str = "login") -> Merged:
    """The Canvas export ``text`` with ``column`` (an existing ``column (id)``, else a new one) filled."""
    rows = _rows(text, "Canvas")
    header = rows[0]
    missing = [c for c in CANVAS_COLUMNS if c not in header]
    if missing:
        raise LmsFormatError(f"the file is not a Canvas gradebook export: its first row lacks {', '.join(missing)} "
                             "(export it from Canvas: Grades, Export, Export Entire Gradebook)")
    key = {"login": "SIS Login ID", "sis": "SIS User ID", "email": "SIS Login ID"}[_match(match)]
    at, added = _column(header, column, lambda h: re.fullmatch(rf"{re.escape(column)} \(\d+\)", h))
    student_rows = [r for r in rows[1:] if not _canvas_meta(r, header)]
    points = [r for r in rows[1:] if _canvas_meta(r, header) and r[0].strip() == "Points Possible"]
    merged = _fill(rows, header, student_rows, totals, at, header.index(key), match, "Canvas")
    merged.added = added
    for row in points:
        maximum = _number_text(totals[0].max_score) if totals else ""
        if added:
            row[at] = maximum
        elif maximum and _is_number(row[at]) and float(row[at]) != float(maximum):
            merged.notes.append(f"Canvas's column {shown(header[at])} is out of {row[at]} points, the assignment "
                                f"out of {maximum}: the totals are written as points out of {maximum}; change "
                                "the assignment's points in Canvas to match before importing")
    merged.text = _csv_text(rows)
    return merged


def merge_moodle(text: str, totals: list[Total], *, column: str, match: str = "email") -> Merged:
    """The Moodle export ``text`` with the grade item ``column`` (``Type: column (Real)``, else a new
    column, which the import maps to a new grade item) filled."""
    rows = _rows(text, "Moodle")
    header = rows[0]
    key = {"login": "Username", "sis": "ID number", "email": "Email address"}[_match(match)]
    if "Email address" not in header and "ID number" not in header:
        raise LmsFormatError("the file is not a Moodle grade export: its first row has neither 'Email address' nor "
                             "'ID number' (export it from Moodle: Grade administration, Export, Plain text file)")
    if key not in header:
        raise LmsFormatError(f"the Moodle export has no {key!r} column to match students by (--match {match}): "
                             "export it with that user field, or choose another --match")
    at, added = _column(header, column, lambda h: (m := _MOODLE_ITEM.match(h)) is not None and m["name"] == column)
    merged = _fill(rows, header, rows[1:], totals, at, header.index(key), match, "Moodle")
    merged.added, merged.text = added, _csv_text(rows)
    return merged


def _match(match: str) -> str:
    if match not in MATCHES:
        raise LmsFormatError(f"--match {match!r}: choose one of {', '.join(MATCHES)}")
    return match


def _rows(text: str, lms: str) -> list[list[str]]:
    text = text[1:] if text.startswith("\ufeff") else text
    try:
        rows = [row for row in csv.reader(io.StringIO(text, newline=""), strict=True) if any(c.strip() for c in row)]
    except csv.Error as exc:
        raise LmsFormatError(f"the {lms} export is not a CSV file that can be read ({exc})") from None
    if not rows:
        raise LmsFormatError(f"the {lms} export is empty: export the gradebook again")
    width = len(rows[0])
    return [row + [""] * (width - len(row)) for row in rows]


def _canvas_meta(row: list[str], header: list[str]) -> bool:
    """Canvas's rows that are no student: Points Possible (and Manual Posting), with no user ID."""
    return not row[header.index("ID")].strip() and row[0].strip() in ("Points Possible", "Manual Posting", "")


def _column(header: list[str], column: str, matches) -> tuple[int, bool]:
    """The index of the assignment's column (added at the end when the export has none) and whether it was added."""
    found = [i for i, h in enumerate(header) if h == column] or [i for i, h in enumerate(header) if matches(h)]
    if len(found) > 1:
        raise LmsFormatError(f"the export has {len(found)} columns for {column!r} "
                             f"({', '.join(shown(header[i]) for i in found)}): name one exactly with --column")
    if found:
        return found[0], False
    header.append(column)
    return len(header) - 1, True


def _fill(rows, header, student_rows, totals, at: int, key_at: int, match: str, lms: str) -> Merged:
    """Write each matched student's total into column ``at``; name everyone who could not be matched."""
    for row in rows[1:]:
        row += [""] * (len(header) - len(row))
    ours, shared = _by_key(totals, match)
    keys: dict[str, list[list[str]]] = {}
    for row in student_rows:
        keys.setdefault(_key(row[key_at], match), []).append(row)
    merged, unmatched, replaced, placed = Merged("", header[at]), [], [], set()
    for k, lms_rows in keys.items():
        if not k or len(lms_rows) > 1 or k not in ours:
            why = ("no key" if not k else f"{len(lms_rows)} rows share it" if len(lms_rows) > 1 else "not in the gradebook")
            unmatched += [f"{shown(r[0])} ({header[key_at]} {shown(r[key_at])}: {why})" for r in lms_rows]
            continue
        for row in lms_rows:
            score = _number_text(ours[k].score)
            if _replaces(row[at], score):
                replaced.append(f"{shown(row[0])} ({shown(row[at].strip())} -> {score})")
            row[at] = score
            merged.filled += 1
            placed.add(ours[k].student)
    alone = [t for t in totals if t.student not in placed and not any(t in ts for ts in shared)]
    if replaced:         # a score typed into the LMS (a regrade, an excuse) is someone's work: said, not lost
        merged.notes.append(f"{len(replaced)} score{'s' if len(replaced) != 1 else ''} already in the {lms} column "
                            f"{'were' if len(replaced) != 1 else 'was'} replaced by the gradebook's: "
                            f"{'; '.join(replaced[:20])}" + _more(replaced))
    if shared:           # an identity that would merge two students places neither, and says so
        merged.notes.append(f"{len(shared)} {'key is' if len(shared) == 1 else 'keys are'} shared by two students of "
                            f"the gradebook, who got no score: "
                            + "; ".join(" and ".join(shown(t.student) for t in ts) for ts in shared[:20]) + _more(shared))
    if unmatched:
        merged.notes.append(f"{len(unmatched)} row{'s' if len(unmatched) != 1 else ''} of the {lms} export got no "
                            f"score (left as they were): {'; '.join(unmatched[:20])}" + _more(unmatched))
    if alone:
        merged.notes.append(f"{len(alone)} student{'s' if len(alone) != 1 else ''} of the gradebook "
                            f"{'are' if len(alone) != 1 else 'is'} not in the {lms} export (matched by "
                            f"{header[key_at]}): " + ", ".join(
                                f"{shown(t.student)} ({_number_text(t.score)})" for t in alone[:20]) + _more(alone))
    return merged


def _replaces(old: str, new: str) -> bool:
    """Whether writing ``new`` over the cell ``old`` loses something: any value but blank, Moodle's "-" (no
    grade) or the same number."""
    old = old.strip()
    if old in ("", "-"):
        return False
    return not (_is_number(old) and float(old) == float(new))


def _by_key(totals: list[Total], match: str) -> tuple[dict[str, Total], list[list[Total]]]:
    """key -> the one student it names, and the students of each key that two share (neither is placed)."""
    out: dict[str, list[Total]] = {}
    for total in totals:
        if k := _key(total.email if match == "email" else total.student, match):
            out.setdefault(k, []).append(total)
    shared = [ts for ts in out.values() if len(ts) > 1]
    return {k: ts[0] for k, ts in out.items() if len(ts) == 1}, shared


def _key(value: str, match: str) -> str:
    """What a row is matched by: a login or SIS id exactly as written (``alice `` is not ``alice``: two students
    of the gradebook are never one row of the LMS); an e-mail address without its case or surrounding spaces."""
    return value.strip().casefold() if match == "email" else value


def _more(items: list) -> str:
    return f" and {len(items) - 20} more" if len(items) > 20 else ""


def _is_number(text: str) -> bool:
    return bool(_NUMBER.fullmatch(text.strip()))


def _number_text(value: float) -> str:
    return f"{round(float(value), 4):g}"


def _csv_text(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    for row in rows:
        writer.writerow([cell if _is_number(cell) or cell == "-" else csv_cell(cell) for cell in row])
    return buf.getvalue()
