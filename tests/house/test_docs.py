"""The docs: docs/ builds with Sphinx and MyST with warnings as errors, the engineers' notes (docs/notes/) stay
out of the build, every generated table is what scripts/gen_docs.py makes from the code now, and the README
stays a front door that links into docs/."""
import dataclasses
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import gen_docs  # noqa: E402 - scripts/ is no package

README = ROOT / "README.md"


def _build(src, out) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                           "-d", str(out / "doctrees"), str(src), str(out / "html")],
                          capture_output=True, text=True, timeout=300)


def test_the_site_builds_with_warnings_as_errors_and_a_note_stays_out(tmp_path):
    """The whole site, with a note in docs/notes/ that would fail a strict build (a broken link, a page in no
    table of contents): the note is left out, and nothing warns."""
    src = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", src, ignore=shutil.ignore_patterns("_build"))
    (src / "notes").mkdir(exist_ok=True)
    (src / "notes" / "some-branch.md").write_text("# A branch's note\n\nSee [nothing](nowhere.md#no-heading).\n")
    proc = _build(src, tmp_path / "site")
    assert proc.returncode == 0, proc.stderr
    html = tmp_path / "site" / "html"
    assert (html / "index.html").is_file() and (html / "reference" / "rubric.html").is_file()
    assert not (html / "notes").exists()


def test_a_link_to_a_missing_heading_fails_the_build(tmp_path):
    """The build above can fail: with the project's conf.py, a link to a heading that does not exist is an
    error, as is a page no table of contents reaches."""
    src = tmp_path / "docs"
    src.mkdir()
    shutil.copy(ROOT / "docs" / "conf.py", src)
    (src / "index.md").write_text("# Home\n\n[there](other.md#no-such-heading)\n\n```{toctree}\n:hidden:\n\nother\n```\n")
    (src / "other.md").write_text("# Other\n\n## A heading\n")
    (src / "orphan.md").write_text("# Reached by nothing\n")
    proc = _build(src, tmp_path / "site")
    assert proc.returncode != 0
    assert "no-such-heading" in proc.stderr and "orphan" in proc.stderr


def test_the_generated_tables_are_current():
    stale = [str(p.relative_to(ROOT)) for p in gen_docs.refresh(check=True)]
    assert stale == [], f"out of date: {', '.join(stale)}: run .venv/bin/python scripts/gen_docs.py"


def test_a_change_in_the_code_changes_its_table():
    """The check above can fail: the rubric page as it stands is what the generator writes, and a check's
    points changed in the rubric make it out of date."""
    from autograder.grading.rubric import RUBRIC
    page = (ROOT / "docs" / "reference" / "rubric.md").read_text()
    made = {name: make() for name, (make, _) in gen_docs.TABLES.items()}
    assert gen_docs.render(page, made) == page
    reweighted = {g: [dataclasses.replace(i, points=i.points + 1) for i in items] for g, items in RUBRIC.items()}
    assert gen_docs.render(page, {**made, "rubric-checks": gen_docs.rubric_checks(reweighted)}) != page


def test_a_check_a_layer_or_an_attack_the_words_do_not_cover_stops_the_generator():
    from autograder.sandbox.status import SANDBOX_LAYERS
    from corpora import load
    words = gen_docs._data("rubric")
    del words["ex2_mask"]["values"]
    with pytest.raises(gen_docs.DocsError, match=r"ex2_mask\.values"):
        gen_docs.rubric_checks(words=words)
    with pytest.raises(gen_docs.DocsError, match="'a new layer'"):
        gen_docs.isolation_layers(layers={**SANDBOX_LAYERS, "a new layer": "a new layer"}, attacks=[])
    stray = dataclasses.replace(load("adversarial")[0], layer="a layer no row names")
    with pytest.raises(gen_docs.DocsError, match="a layer no row names"):
        gen_docs.attack_corpus(attacks=[stray])


def test_a_generated_table_on_no_page_stops_the_generator(tmp_path):
    (tmp_path / "page.md").write_text("# A page without its tables\n")
    with pytest.raises(gen_docs.DocsError, match="commands on 0"):
        gen_docs.refresh(check=True, docs=tmp_path)


def _slug(heading: str) -> str:
    """The anchor MyST (and GitHub) give a heading."""
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", heading.strip().lower()))


def test_the_readme_is_a_front_door():
    """At most ~250 lines: the two commands (and make check), and links that land on a page and a heading of
    docs/."""
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    for command in ("make demo", "make test", "make check"):
        assert command in text
    links = re.findall(r"\]\((docs/[^)#]+)(?:#([^)]+))?\)", text)
    assert len({path for path, _ in links}) >= 20, links
    for path, anchor in links:
        page = ROOT / path
        assert page.is_file(), path
        headings = re.findall(r"^#+ (.+)$", page.read_text(), re.M)
        assert not anchor or anchor in map(_slug, headings), f"{path}#{anchor}"
