"""Refresh the generated tables of docs/ from the code that owns them.

    .venv/bin/python scripts/gen_docs.py           # rewrite each generated table that changed
    .venv/bin/python scripts/gen_docs.py --check   # write nothing; exit 1 naming each page out of date

A page holds a generated table between two comments, ``<!-- generated: NAME ... -->`` and
``<!-- end generated: NAME -->``; everything else on the page is written by hand. ``TABLES`` says what each
NAME is made from. The words a table needs and the code cannot give (what a sandbox layer stops, what a
rubric check tests and why) live in docs/_data/*.toml, keyed by the code's own names: a layer or a check the
code has and the words lack (or the other way round) stops this script with one line saying what to add.
tests/house/test_docs.py fails when a page is not what this script writes.
"""
from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import tomllib
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
DATA = DOCS / "_data"
SKIP = ("notes", "_build", "_data")          # the teammates' notes and the build are no part of the pages
for _path in (ROOT, ROOT / "tests", ROOT / "tests" / "helpers"):    # the corpora and their reader
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

REGION = re.compile(r"<!-- generated: (?P<name>[\w-]+)[^\n]*-->\n(?P<body>.*?)<!-- end generated: (?P=name) -->",
                    re.DOTALL)


class DocsError(ValueError):
    """The code and the words of docs/_data disagree, or a page's generated tables are not as they should be."""


def prose(text: object) -> str:
    """Text from the code shown as written: ``<student>`` escaped outside code spans (else it is an HTML tag)."""
    parts = re.split(r"(`[^`]*`)", str(text))
    return "".join(p if p.startswith("`") else p.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                   for p in parts)


def cell(text: object) -> str:
    """Text fit for one cell of a markdown table."""
    return prose(text).replace("\n", " ").replace("|", "\\|").strip()


def table(header: tuple[str, ...], rows: list[tuple]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _data(name: str) -> dict:
    return tomllib.loads((DATA / f"{name}.toml").read_text())


# --- the command line (autograder/__main__.py) -----------------------------------------------------------

def commands(parser: argparse.ArgumentParser | None = None) -> str:
    """Each command: what it does, its usage, and a table of its options with their defaults."""
    if parser is None:
        from autograder.__main__ import build_parser
        parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in sub._choices_actions}
    parts = [table(("command", "what it does"), [(f"[`{n}`](#{n})", helps.get(n, "")) for n in sub.choices])]
    for name, command in sub.choices.items():
        parts.append(_command(name, command, helps.get(name, "")))
    return "\n".join(parts)


def _command(name: str, command: argparse.ArgumentParser, what: str) -> str:
    formatter = argparse.HelpFormatter(command.prog, width=100)
    formatter.add_usage(command.usage, command._actions, command._mutually_exclusive_groups, prefix="")
    usage = formatter.format_help().strip()
    rows = [(f"`{formatter._format_action_invocation(a)}`", _default(a), a.help or "")
            for a in command._actions if not isinstance(a, argparse._HelpAction)]
    text = f"## {name}\n\n{prose(what[:1].upper() + what[1:])}.\n\n```text\n{usage}\n```\n\n"
    text += table(("argument", "default", "what it is"), rows) if rows else "It takes no arguments.\n"
    for group in command._mutually_exclusive_groups:
        names = ", ".join(f"`{a.option_strings[0]}`" for a in group._group_actions)
        text += f"\n{'Exactly' if group.required else 'At most'} one of {names}.\n"
    return text


def _default(action: argparse.Action) -> str:
    if action.default in (None, False, argparse.SUPPRESS) or isinstance(action, argparse._StoreTrueAction):
        return "required" if action.required and not action.option_strings else ""
    return f"`{action.default}`"


# --- the rubric (autograder/grading/rubric.py, autograder/assignment.py) ----------------------------------

def rubric_cells(rubric: dict | None = None) -> str:
    """Each notebook: its grade cells with their points, the functions it defines; the total."""
    from autograder.assignment import FUNCTIONS, NOTEBOOKS
    if rubric is None:
        from autograder.grading.rubric import RUBRIC as rubric
    points = {g: sum(i.points for i in items) for g, items in rubric.items()}
    rows = [(f"`{nb}`", ", ".join(f"`{g}` ({points[g]})" for g in cells), ", ".join(f"`{f}`" for f in FUNCTIONS[nb]))
            for nb, cells in NOTEBOOKS.items()]
    return (f"The hidden-test cells carry **{sum(points.values())} points** in all.\n\n"
            + table(("notebook", "grade cells (points)", "functions it defines"), rows))


def rubric_checks(rubric: dict | None = None, words: dict | None = None) -> str:
    """One row per check, in the order they run: its points, category and title from the rubric, what it
    tests and why it is worth that from docs/_data/rubric.toml."""
    if rubric is None:
        from autograder.grading.rubric import RUBRIC as rubric
    words = _data("rubric") if words is None else words
    have = {(g, i.name) for g, items in rubric.items() for i in items}
    said = {(g, c) for g, checks in words.items() for c in checks}
    if have - said:
        raise DocsError("docs/_data/rubric.toml says nothing of " + ", ".join(f"{g}.{c}" for g, c in sorted(have - said))
                        + ": add what each tests and why it is worth its points")
    if said - have:
        raise DocsError("docs/_data/rubric.toml describes checks the rubric does not have: "
                        + ", ".join(f"{g}.{c}" for g, c in sorted(said - have)) + ": remove them")
    rows = [(f"`{g}.{i.name}`", i.points, i.category, i.title, words[g][i.name]["tests"], words[g][i.name]["why"])
            for g, items in rubric.items() for i in items]
    return table(("check", "points", "category", "title (the report's charts)", "what it tests",
                  "why it is worth that"), rows)


# --- the misconception catalogue (autograder/misconceptions/) ----------------------------------------------

def catalogue(entries: list | None = None) -> str:
    """One row per catalogue id and piece of advice, with the functions it is a realisation of."""
    if entries is None:
        from autograder.misconceptions import CATALOGUE as entries
    groups: dict[tuple[str, str], list[str]] = {}
    for entry in entries:
        functions = groups.setdefault((entry.id, entry.advice), [])
        if entry.function not in functions:
            functions.append(entry.function)
    rows = [(f"`{mid}`", ", ".join(f"`{f}`" for f in functions), f"It looks like {advice}")
            for (mid, advice), functions in groups.items()]
    return table(("misconception", "in", "what the feedback says"), rows)


# --- the sandbox (autograder/sandbox/status.py, layers.py; tests/adversarial/) ------------------------------

def _attacks() -> list:
    from corpora import load
    return load("adversarial")


def _row_of(layer: str, names: list[str], attack: str) -> int:
    found = [i for i, name in enumerate(names) if name.startswith(layer)]
    if len(found) != 1:
        raise DocsError(f"tests/adversarial/{attack}.py: LAYER {layer!r} starts {len(found)} rows of "
                        "docs/_data/sandbox.toml: name exactly one")
    return found[0]


def _counts(rows: list[dict], attacks: list) -> list[int]:
    names = [r["name"] for r in rows]
    counts = [0] * len(rows)
    for attack in attacks:
        if attack.layer and any(n.startswith(attack.layer) for n in names):
            counts[_row_of(attack.layer, names, attack.name)] += 1
    return counts


def isolation_layers(words: dict | None = None, layers: dict | None = None, attacks: list | None = None) -> str:
    """The worker's isolation layers: each row's words, what ``doctor`` prints for the layers it stands for,
    and how many attacks of the corpus it must stop."""
    if layers is None:
        from autograder.sandbox.status import SANDBOX_LAYERS as layers
    rows = (_data("sandbox") if words is None else words)["isolation"]
    listed = [key for row in rows for key in row["layers"]]
    unknown = [k for k in listed if k not in layers]
    if unknown:
        raise DocsError(f"docs/_data/sandbox.toml lists {', '.join(map(repr, unknown))}, which SANDBOX_LAYERS "
                        "(autograder/sandbox/status.py) does not have: use its keys")
    twice = sorted({k for k in listed if listed.count(k) > 1})
    missing = [k for k in layers if k not in listed]
    if missing or twice:
        raise DocsError("docs/_data/sandbox.toml: every layer of SANDBOX_LAYERS belongs to one row; "
                        + "; ".join(filter(None, [missing and f"add {', '.join(map(repr, missing))} to a row "
                                                  "(or a new row saying what it stops and what it costs)",
                                                  twice and f"{', '.join(map(repr, twice))} in several rows"])))
    counts = _counts(rows, _attacks() if attacks is None else attacks)
    return table(("layer", "`doctor` lists it as", "what it stops", "cost per worker (measured)", "attacks"),
                 [(r["name"], "; ".join(layers[k] for k in r["layers"]), r["stops"], r["cost"], n)
                  for r, n in zip(rows, counts)])


def defences(words: dict | None = None, attacks: list | None = None) -> str:
    rows = (_data("sandbox") if words is None else words)["defence"]
    counts = _counts(rows, _attacks() if attacks is None else attacks)
    return table(("defence", "what it stops", "attacks"), [(r["name"], r["stops"], n) for r, n in zip(rows, counts)])


def attack_corpus(words: dict | None = None, attacks: list | None = None) -> str:
    """Every attack of tests/adversarial/, by the row that must stop it: its kind, target and first line."""
    words = _data("sandbox") if words is None else words
    names = [r["name"] for r in words["isolation"] + words["defence"]]
    attacks = _attacks() if attacks is None else attacks
    rows = sorted(((_row_of(a.layer or "", names, a.name), a.name), a) for a in attacks)
    return table(("attack", "kind", "target", "stopped by", "what it does"),
                 [(f"`{a.name}`", a.kind, f"`{a.target}`" if a.target else "the files", names[i].split(" (")[0],
                   _first_line(a.module().__doc__)) for (i, _), a in rows])


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().split("\n\n")[0].replace("\n", " ")


# --- settings (autograder/sandbox/limits.py, autograder/watch/config.py, nbgrader_config.py) ----------------

def limits() -> str:
    """The limits of one submission's worker: the defaults of ``Limits`` and the comment beside each."""
    from autograder.sandbox.limits import Limits
    said = _field_comments(ROOT / "autograder" / "sandbox" / "limits.py", "Limits")
    return table(("`Limits` field", "default", "what it bounds"),
                 [(f"`{f.name}`", _amount(f.name, f.default), said.get(f.name, "")) for f in dataclasses.fields(Limits)])


def _field_comments(path: Path, cls: str) -> dict[str, str]:
    """Each field of a dataclass -> the comment beside it (with the comment lines that carry it on)."""
    body = path.read_text().split(f"class {cls}", 1)[1].split("\n\n\n", 1)[0]
    said: dict[str, str] = {}
    name = None
    for line in body.splitlines():
        field = re.match(r"\s+(\w+): [^#]*#\s*(.*)", line)
        more = re.match(r"\s+#\s*(.*)", line)
        if field:
            name, said[field[1]] = field[1], field[2].strip()
        elif more and name:
            said[name] += " " + more[1].strip()
        else:
            name = None
    return said


def _amount(name: str, value: object) -> str:
    if isinstance(value, int) and (name.endswith("_bytes") or name.startswith("address_space")):
        for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
            if value and value % (1 << shift) == 0:
                return f"{value >> shift} {unit}"
        return f"{value} bytes"
    return f"{value:g} s" if name.endswith("_seconds") else str(value)


def feedback_settings() -> str:
    from autograder.watch.config import DEFAULTS, SECTION, SHOW
    shown = {"show": "one of " + ", ".join(f'"{s}"' for s in SHOW), "limit": '"N/day" or "N/hour"',
             "after_due_date": "True or False"}
    lines = [f"c.{SECTION}.{k} = {v!r}".replace("'", '"') for k, v in DEFAULTS.items()]
    width = max(map(len, lines)) + 2
    return "```python\n" + "\n".join(f"{line:<{width}}# {shown.get(k, '')}" for line, k in zip(lines, DEFAULTS)) + "\n```\n"


def course_config() -> str:
    return "```python\n" + (ROOT / "nbgrader_config.py").read_text().rstrip() + "\n```\n"


# --- the package's layers (autograder.LAYERS) ---------------------------------------------------------------

def package_layers() -> str:
    from autograder import LAYERS
    flat = lambda level: [n for part in level for n in (flat(part) if isinstance(part, tuple) else [part])]  # noqa: E731
    return table(("level", "folders and modules (lowest first)"),
                 [(i, ", ".join(f"`{n}`" for n in flat(level))) for i, level in enumerate(LAYERS, 1)])


TABLES: dict[str, tuple[Callable[[], str], str]] = {
    "commands": (commands, "autograder/__main__.py's parser"),
    "rubric-cells": (rubric_cells, "autograder/grading/rubric.py and autograder/assignment.py"),
    "rubric-checks": (rubric_checks, "autograder/grading/rubric.py and docs/_data/rubric.toml"),
    "catalogue": (catalogue, "autograder/misconceptions/"),
    "isolation-layers": (isolation_layers, "autograder/sandbox/status.py, tests/adversarial/ and docs/_data/sandbox.toml"),
    "defences": (defences, "tests/adversarial/ and docs/_data/sandbox.toml"),
    "attacks": (attack_corpus, "tests/adversarial/"),
    "limits": (limits, "autograder/sandbox/limits.py"),
    "feedback-settings": (feedback_settings, "autograder/watch/config.py"),
    "course-config": (course_config, "nbgrader_config.py"),
    "package-layers": (package_layers, "autograder/__init__.py's LAYERS"),
}


def pages(docs: Path = DOCS) -> list[Path]:
    return sorted(p for p in docs.rglob("*.md") if not set(p.relative_to(docs).parts[:-1]) & set(SKIP))


def render(text: str, made: dict[str, str]) -> str:
    """The page ``text`` with each generated table replaced by what ``made`` holds for its name."""
    def fill(match: re.Match) -> str:
        name = match["name"]
        if name not in made:
            raise DocsError(f"a page holds a generated table {name!r} that scripts/gen_docs.py does not make "
                            f"(it makes {', '.join(TABLES)})")
        return (f"<!-- generated: {name} (from {TABLES[name][1]} by scripts/gen_docs.py: edit those, not this) -->"
                f"\n{made[name]}<!-- end generated: {name} -->")
    return REGION.sub(fill, text)


def refresh(check: bool = False, docs: Path = DOCS) -> list[Path]:
    """The pages whose generated tables were not current (rewritten unless ``check``)."""
    made = {name: make() for name, (make, _) in TABLES.items()}
    seen: dict[str, list[Path]] = {name: [] for name in TABLES}
    new = {}
    for page in pages(docs):
        text = page.read_text()
        for match in REGION.finditer(text):
            seen.setdefault(match["name"], []).append(page)
        if render(text, made) != text:
            new[page] = render(text, made)
    wrong = {n: p for n, p in seen.items() if len(p) != 1}
    if wrong:
        raise DocsError("each generated table stands on one page: " + "; ".join(
            f"{n} on {len(p)} ({', '.join(str(x.relative_to(docs)) for x in p) or 'none'})" for n, p in wrong.items()))
    for page, text in new.items():
        if not check:
            page.write_text(text)
    return list(new)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page is out of date")
    args = parser.parse_args(argv)
    try:
        stale = refresh(check=args.check)
    except DocsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for page in stale:
        print(f"{'out of date' if args.check else 'rewrote'}: {page.relative_to(ROOT)}")
    if args.check and stale:
        print("run: .venv/bin/python scripts/gen_docs.py", file=sys.stderr)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
