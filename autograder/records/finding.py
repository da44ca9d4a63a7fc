"""A finding: one problem of a submission that needs a person, as intake or the worker found it.

A record keeps its findings as one tuple of this one type, and every output reads them: whether a problem
accuses the student is the finding's ``accuses``, never a match on its text (design rule 5: what a machine
suspects about integrity reaches a student only once a person has said it).

Records written before findings (their problems as parallel lists: ``integrity``, ``review``, ``named``,
``suspicions``, ``flags``) are read as findings by ``from_parallel_lists``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

UNSAID = "marked for review by the grader"       # an old record's review with no reason kept


@dataclass(frozen=True)
class Finding:
    """What is wrong (``message``: what a student's page may say, unless it ``accuses``), the ``notebook`` it is
    about ("" for the whole submission: its folder, a grader failure) and a ``private`` detail only the
    instructor reads, in the message's place (a classmate's name)."""
    message: str
    notebook: str = ""
    private: str = ""
    accuses: bool = False            # a copy, a link to a classmate's, tampering: a person tells the student

    @property
    def for_instructor(self) -> str:
        """The line the instructor reads: the private detail where there is one (it names more)."""
        return self.private or self.message

    def to_dict(self) -> dict[str, Any]:
        return {"message": self.message, "notebook": self.notebook, "private": self.private,
                "accuses": self.accuses}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        """The finding ``to_dict`` wrote; TypeError when a text is not one (a damaged record)."""
        texts = [data["message"], data.get("notebook", ""), data.get("private", "")]
        if not all(isinstance(t, str) for t in texts):
            raise TypeError(f"a finding's message, notebook and private detail are texts, not {texts!r}")
        return cls(texts[0], texts[1], texts[2], data.get("accuses") is True)


def from_parallel_lists(data: dict[str, Any], internal: bool = False) -> tuple[Finding, ...]:
    """The findings of a record written before them, from its parallel lists: ``integrity`` (every problem),
    ``flags`` (notebook -> its problems; "" the whole submission's), ``suspicions`` (the ones that accuse),
    ``named`` (problem -> the private line naming a classmate) and ``review`` (the private lines). A record
    written before flags were kept gave every problem to every notebook (the whole submission's, here), and
    a review with no reason ``UNSAID`` unless a check the grader could not run (``internal``) said why."""
    problems = [str(p) for p in data.get("integrity") or ()]
    flags: dict[str, list[str]] = {str(nb): [str(p) for p in why] for nb, why in (data.get("flags") or {}).items()}
    suspicions = {str(s) for s in data.get("suspicions") or ()}
    named: dict[str, str] = {str(k): str(v) for k, v in (data.get("named") or {}).items()}
    found = [Finding(p, _notebook_of(p, flags), named.get(p, ""), p in suspicions) for p in problems]
    paired = set(named.values())
    found += [Finding(line, "", line, True) for line in map(str, data.get("review") or ()) if line not in paired]
    if not found and data.get("needs_review") and "" not in flags and not internal:
        found.append(Finding(UNSAID))
    return tuple(found)


def _notebook_of(problem: str, flags: dict[str, list[str]]) -> str:
    """The notebook whose flags hold ``problem`` (each occurrence taken once), or "" (the whole submission)."""
    for notebook, why in flags.items():
        if problem in why:
            why.remove(problem)
            return notebook
    return ""
