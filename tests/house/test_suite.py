"""The suite's own rules: markers come from where a test lives (tests/conftest.py), never by hand, the
files it starts first are files that exist, and no two test files share a name."""
import re
from collections import defaultdict

import conftest
from conftest import TESTS

HAND_SET = re.compile(r"pytest\.mark\.(slow|jupyterhub|env|" + "|".join(conftest.ENVIRONMENTS) + r")\b")


def test_the_slowest_files_listed_to_start_first_exist():
    missing = [name for name in conftest.SLOWEST_FIRST if not (TESTS / name).is_file()]
    assert missing == [], f"tests/conftest.py's SLOWEST_FIRST names files that are gone: {missing}"
    assert len(set(conftest.SLOWEST_FIRST)) == len(conftest.SLOWEST_FIRST)
    gone = [name for name in conftest.APART if not (TESTS / name).is_file()]
    assert gone == [], f"tests/conftest.py's APART names files that are gone: {gone}"


def test_no_test_sets_an_environment_or_speed_marker_by_hand():
    """`env` and its kind are set by tests/conftest.py for every test under tests/env/<kind>/ (and only
    there: `make check` leaves that folder out); a file elsewhere that marked itself would be run by the
    wrong tier, and a hand-set `slow` no longer means anything."""
    hand_set = {str(path.relative_to(TESTS)): sorted(set(HAND_SET.findall(path.read_text())))
                for path in TESTS.rglob("test_*.py") if HAND_SET.search(path.read_text())}
    assert hand_set == {}


def test_every_environment_folder_is_a_marker():
    folders = {p.name for p in (TESTS / "env").iterdir() if p.is_dir() and not p.name.startswith(("_", "."))}
    assert folders <= set(conftest.ENVIRONMENTS)


def test_no_two_test_files_share_a_basename():
    """The test folders are no packages (no __init__.py) and pytest imports a test file by its basename
    (the default import mode, "prepend"): a second tests/<a>/test_x.py beside tests/<b>/test_x.py stops the
    whole collection ('import file mismatch'), as two test_gradebook_refused.py did on CI."""
    where = defaultdict(list)
    for path in TESTS.rglob("*.py"):
        if path.name.startswith("test_") or path.name.endswith("_test.py"):
            where[path.name].append(str(path.relative_to(TESTS)))
    shared = {name: sorted(paths) for name, paths in where.items() if len(paths) > 1}
    assert shared == {}, f"test files sharing a basename (rename one: pytest cannot collect both): {shared}"
