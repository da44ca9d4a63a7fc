"""`make test` without root: the browser tests skip and say why; as root a missing chromium fails."""
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import browser_helpers
from conftest import ROOT


def _without_chromium(monkeypatch, uid):
    monkeypatch.setattr(browser_helpers, "find_chromium", lambda: None)
    monkeypatch.setattr(os, "geteuid", lambda: uid)


def test_missing_chromium_without_root_skips_and_says_why(monkeypatch):
    pytest.importorskip("playwright.sync_api")
    _without_chromium(monkeypatch, 1000)
    with pytest.raises(pytest.skip.Exception, match="cannot be installed without root"):
        browser_helpers.browser()


def test_missing_chromium_as_root_fails_so_ci_never_skips(monkeypatch):
    pytest.importorskip("playwright.sync_api")
    _without_chromium(monkeypatch, 0)
    with pytest.raises(pytest.fail.Exception, match="make browser"):
        browser_helpers.browser()


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root to become another user")
@pytest.mark.parametrize("target", ["browser", "system-packages"])      # `make browser`; what `make test` runs
def test_make_browser_succeeds_without_root_when_chromium_is_missing(target):
    # The Makefile alone, in a folder another account can read: a checkout may sit below folders only root enters.
    folder = Path(tempfile.mkdtemp(prefix="make-browser-"))
    try:
        shutil.copy(ROOT / "Makefile", folder / "Makefile")
        folder.chmod(0o755)
        (folder / "Makefile").chmod(0o644)
        proc = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "make", "-s",
                               target, "CHROMIUM=no-such-chromium-here"],
                              cwd=folder, capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(folder)
    assert proc.returncode == 0, proc.stderr
    assert "needs root" in proc.stdout and "skip" in proc.stdout
